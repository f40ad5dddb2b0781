-- A file holds the blocks written into it, not its size: one byte 10 GiB past its end takes one
-- block of the quota (here when the buffered byte is written, at close).
local f = assert(io.open("/work/sparse.bin", "wb"))
assert(f:seek("set", 10 * 1024 * 1024 * 1024))
local wrote = f:write("x")
local closed = f:close()
return (wrote and closed) and "written" or "refused"
