import forge
forge.state.set("", 1)
