try { await tools.call("echo", "x".repeat(2 * 1024 * 1024)); return "ran"; }
catch (e) { return [e.code, e instanceof Error]; }
