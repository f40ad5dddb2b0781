return tools.call("sleep", { ms = 5 })
