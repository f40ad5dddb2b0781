local v = 0
for _ = 1, 513 do v = { v } end
return v
