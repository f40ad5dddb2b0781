try { await tools.call('x'.repeat(500000), {}); } catch (e) { return e.code; }
