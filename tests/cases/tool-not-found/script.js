await tools.call("no-such-tool", {});
