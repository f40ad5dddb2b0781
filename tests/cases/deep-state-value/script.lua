local deep = 0
for _ = 1, 600 do deep = { deep } end
local ok, e = pcall(state.set, "deep", deep)
return ok and "set" or e.code
