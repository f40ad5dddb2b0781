-- No io library, loadfile or dofile: no way to name a host file.
local seen = json.array()
for _, path in ipairs({ "/etc/passwd", "/root", "/proc/self/environ", "../../../etc/passwd" }) do
  if loadfile ~= nil and loadfile(path) then seen[#seen + 1] = path end
  if dofile ~= nil and pcall(dofile, path) then seen[#seen + 1] = path end
  if io ~= nil and io.open(path) then seen[#seen + 1] = path end
end
local env = json.array()
if os.getenv ~= nil and os.getenv("HOME") ~= nil then env[#env + 1] = "HOME" end
return { seen = seen, env = env }
