local g = coroutine.wrap(function()
  while true do coroutine.yield(1) end
end)
local n = 0
while true do n = n + g() end
