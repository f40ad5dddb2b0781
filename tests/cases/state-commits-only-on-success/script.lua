state.set("n", 2)
state.set("new", true)
state.delete("n")
error("after the writes")
