-- Lua reads the environment with os.getenv, which this engine does not have.
local seen = json.array()
if os.getenv ~= nil then
  for _, name in ipairs({ "HOME", "PATH", "USER", "PWD" }) do
    if os.getenv(name) ~= nil then seen[#seen + 1] = name end
  end
end
return seen
