-- io.open answers Lua's nil, message, errno; EPERM (1) and EACCES (13) are what Python calls a
-- PermissionError.
local f, message, errno = io.open("/input/new.txt", "w")
if f ~= nil then
  f:write("x")
  f:close()
  return "wrote"
end
if errno == 1 or errno == 13 then
  return "PermissionError"
end
return message
