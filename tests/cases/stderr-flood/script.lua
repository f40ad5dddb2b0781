local line = ("x"):rep(1000)
for _ = 1, 20000 do eprint(line) end
return "flooded"
