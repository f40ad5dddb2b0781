local keep = {}
local s = ("x"):rep(1 << 20)
while true do keep[#keep + 1] = s:rep(4) end
