const a = []; a.push(a);
try { await tools.echo(a); return 'sent'; } catch (e) { return 'refused'; }
