-- Lua runs programs with os.execute and io.popen; neither is here.
local ok = pcall(function()
  if io ~= nil and io.popen ~= nil then return io.popen("ls"):read("a") end
  return os.execute("ls")
end)
return ok and "ran" or "refused"
