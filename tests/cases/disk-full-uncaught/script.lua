local f = assert(io.open("/work/fill.bin", "wb"))
local chunk = ("x"):rep(65536)
while true do
  assert(f:write(chunk))
end
