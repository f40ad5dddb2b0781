state.set("", 1)
