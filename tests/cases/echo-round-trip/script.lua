return tools.call("echo", { a = { 1, 2, { b = json.null } }, s = "ü" })
