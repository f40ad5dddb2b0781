local ok = pcall(function()
  if io ~= nil then return assert(io.open("/etc/passwd")):read("a") end
  return assert(loadfile("/etc/passwd"))
end)
return ok and "read" or "refused"
