local f = io.open("/escape.txt", "w")
if f ~= nil and f:write("x") and f:close() then
  return "written"
end
return "refused"
