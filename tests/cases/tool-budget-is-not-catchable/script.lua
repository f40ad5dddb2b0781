local errors = 0
for i = 1, 10 do
  if not pcall(tools.call, "echo", { i = i }) then errors = errors + 1 end
end
return errors
