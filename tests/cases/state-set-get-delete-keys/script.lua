state.set("a", 1)
state.set("b", { x = { 1, 2 } })
state.set("c", "gone soon")
state.delete("c")
return { state.get("a"), state.get("b"), state.get("c") or json.null, state.keys() }
