tools.begin("sleep", { ms = 60000 })
error("gone")
