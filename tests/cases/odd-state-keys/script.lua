local out = {}
for _, key in ipairs({ "", ("k"):rep(100000) }) do
  local ok, e = pcall(state.set, key, 1)
  out[#out + 1] = ok and "set" or e.code
end
return out
