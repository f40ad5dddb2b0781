state.set("n", 2);
state.set("new", true);
state.delete("n");
throw new Error("after the writes");
