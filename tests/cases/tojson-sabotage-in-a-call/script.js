try { await tools.echo({ toJSON() { throw new Error('sabotage'); } }); return 'sent'; } catch (e) { return e.message; }
