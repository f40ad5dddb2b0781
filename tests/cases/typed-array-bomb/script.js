try { new Float64Array(1e9); return 'allocated'; } catch (e) { return e.name; }
