local v = 0
for _ = 1, 512 do v = { v } end
local x = tools.echo(v)
local d = 0
while type(x) == "table" do x, d = x[1], d + 1 end
return d
