local ok, e = pcall(tools.call, "echo", ("x"):rep(2 * 1024 * 1024))
if ok then return "ran" end
return { e.code, ForgeError.is(e) }
