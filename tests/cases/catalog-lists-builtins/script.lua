-- "object": the input schema arrives decoded, as a table.
local function kind(v)
  return type(v) == "table" and "object" or type(v)
end
local out = {}
for _, t in ipairs(tools.list()) do
  out[#out + 1] = { t.name, t.effect, kind(t.input_schema), kind(t.description) }
end
return out
