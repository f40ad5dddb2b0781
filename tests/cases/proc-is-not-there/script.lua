local f = io.open("/proc/self/environ")
if f ~= nil and f:read("a") ~= nil then
  return "read"
end
return "refused"
