local ok = pcall(function() return require("os") end)
return ok and "loaded" or "refused"
