local f = assert(io.open("/output/partial.txt", "w"))
f:write("half of it")
assert(f:close())
error("failed after writing")
