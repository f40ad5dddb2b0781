import forge
forge.state.set("a", 1)
forge.state.set("b", {"x": [1, 2]})
forge.state.set("c", "gone soon")
forge.state.delete("c")
forge.result([forge.state.get("a"), forge.state.get("b"), forge.state.get("c"), forge.state.keys()])
