tools.begin("sleep", { ms = 60000 })
tools.begin("sleep", { ms = 60000 })
return "returned"
