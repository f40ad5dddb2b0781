local a = {}
a[1] = a
local ok = pcall(tools.echo, a)
return ok and "sent" or "refused"
