local ok, e = pcall(tools.call, ("x"):rep(500000), {})
return ok and "called" or e.code
