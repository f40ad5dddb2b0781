local function inner()
  error("deep trouble")
end
local function outer()
  inner()
end
outer()
