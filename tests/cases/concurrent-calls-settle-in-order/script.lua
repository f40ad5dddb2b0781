return tools.gather({ { "sleep", { ms = 30 } }, { "sleep", { ms = 1 } }, { "sleep", { ms = 15 } } })
