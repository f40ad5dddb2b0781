try { await tools.call("echo", "x".repeat(600 * 1024)); return "ran"; }
catch (e) { return e.code; }
