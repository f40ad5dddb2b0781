state.set("", 1);
