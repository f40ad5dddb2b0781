local out = {}
for _, name in ipairs({ "", "\0echo", "../echo" }) do
  local ok, e = pcall(tools.call, name, {})
  out[#out + 1] = ok and "called" or e.code
end
return out
