-- Every file the script opens is one of the host's own descriptors, shared by all runs: past
-- --max-open-files an open fails with an error the script can handle, never a host fault.
-- EDQUOT has no errno in Lua's table, so the message says it.
assert(io.open("/work/f", "w")):close()
local files, code = {}, nil
for _ = 1, 100000 do
  local f, message = io.open("/work/f", "rb")
  if f == nil then
    code = message:find("Disk quota exceeded", 1, true) and "EDQUOT" or message
    break
  end
  files[#files + 1] = f
end
for _, f in ipairs(files) do
  f:close()
end
local again = assert(io.open("/work/f"))
return { code, #files <= 256, again:read("a") }
