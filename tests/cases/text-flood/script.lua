local ok, e = pcall(function()
  while true do text(("x"):rep(10000)) end
end)
return e.code
