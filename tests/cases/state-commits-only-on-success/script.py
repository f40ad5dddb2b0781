import forge
forge.state.set("n", 2)
forge.state.set("new", True)
forge.state.delete("n")
raise RuntimeError("after the writes")
