-- The smallest script: compute, print, return a JSON result.
-- Run: forge-host run examples/hello.lua
local languages = { "JavaScript", "Python", "Lua", "anything that compiles to a component" }
print("hello from " .. _VERSION .. " inside a WebAssembly component")
local echoed = tools.call("echo", { greeting = "hello", to = languages })
return { echoed = echoed, at = os.time() >= 1704067200 }
