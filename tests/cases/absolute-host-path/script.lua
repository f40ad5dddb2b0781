-- io.open reaches the job's folders only (/input, /output, /work): a host path is not there.
local f = io.open("/etc/passwd")
if f ~= nil and f:read("a") ~= nil then
  return "read"
end
return "refused"
