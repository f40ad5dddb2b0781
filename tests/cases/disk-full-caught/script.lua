-- Past --max-disk a write fails with "no space" (ENOSPC, errno 28), which a script may handle
-- and go on.
local f = assert(io.open("/work/big.bin", "wb"))
local chunk = ("x"):rep(65536)
local written, code = 0, nil
while true do
  local ok, _, errno = f:write(chunk)
  if not ok then
    code = errno
    break
  end
  written = written + #chunk
end
f:close()
assert(os.remove("/work/big.bin"))
local small = assert(io.open("/work/small.txt", "w"))
assert(small:write("room again"))
assert(small:close())
return { code == 28 and "ENOSPC" or tostring(code), written <= 2 * 1024 * 1024 }
