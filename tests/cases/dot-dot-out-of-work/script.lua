local f = io.open("/work/../../../etc/passwd")
if f ~= nil and f:read("a") ~= nil then
  return "read"
end
return "refused"
