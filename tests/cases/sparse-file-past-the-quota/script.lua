-- A file's size counts, not the blocks it holds: a write far past its end is refused (here when
-- the buffered byte is written, at close).
local f = assert(io.open("/work/sparse.bin", "wb"))
assert(f:seek("set", 10 * 1024 * 1024 * 1024))
local wrote = f:write("x")
local closed = f:close()
return (wrote and closed) and "written" or "refused"
