import forge
forge.call("no-such-tool", {})
