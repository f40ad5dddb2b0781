-- Lua caps its stack at a million slots (about 64 MiB here), so this is the cap, not the memory.
local function down(n) return down(n + 1) + 1 end
down(0)
