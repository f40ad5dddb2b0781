local f = assert(io.open("/output/hello.txt", "w"))
f:write("hello from the script\n")
assert(f:close())
return "written"
