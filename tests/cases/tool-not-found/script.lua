tools.call("no-such-tool", {})
