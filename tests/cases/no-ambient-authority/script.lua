local function kind(v)
  return v == nil and "undefined" or type(v)
end
return { kind(io), kind(require), kind(package), kind(os.execute), kind(os.getenv), kind(loadfile) }
