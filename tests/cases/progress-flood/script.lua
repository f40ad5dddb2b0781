local i = 0
while i < 100000 do
  progress("step " .. i, i, 100000)
  i = i + 1
end
return i
