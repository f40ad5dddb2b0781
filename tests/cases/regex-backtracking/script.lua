-- Lua patterns have no alternation, but stacked `a*` items backtrack polynomially: 40^10 steps.
return (("a"):rep(40) .. "c"):find(("a*"):rep(10) .. "b") ~= nil
