for i = 1, 10 do tools.call("echo", { i = i }) end
return "unreachable"
