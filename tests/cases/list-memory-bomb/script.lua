local keep = {}
while true do
  local t = {}
  for i = 1, 100000 do t[i] = 0 end
  keep[#keep + 1] = t
end
