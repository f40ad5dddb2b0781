-- io.open reaches the job's folders only, and there is no loadfile, dofile or os.getenv.
local seen = json.array()
for _, path in ipairs({ "/etc/passwd", "/root", "/proc/self/environ", "../../../etc/passwd", "/work/../../etc/passwd" }) do
  local f = io.open(path)
  if f ~= nil and f:read("a") ~= nil then seen[#seen + 1] = path end
  if loadfile ~= nil and loadfile(path) then seen[#seen + 1] = path end
  if dofile ~= nil and pcall(dofile, path) then seen[#seen + 1] = path end
end
local env = json.array()
if os.getenv ~= nil and os.getenv("HOME") ~= nil then env[#env + 1] = "HOME" end
return { seen = seen, env = env }
