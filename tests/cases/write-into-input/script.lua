local f = io.open("/input/new.txt", "w")
if f ~= nil and f:write("x") and f:close() then
  return "written"
end
return "refused"
