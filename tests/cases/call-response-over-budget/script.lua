local ok, e = pcall(tools.call, "echo", ("x"):rep(600 * 1024))
if ok then return "ran" end
return e.code
