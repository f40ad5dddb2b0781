-- args: --input examples/data/sales.csv --out forge-out/lua-report
-- Offline analysis in Lua: read a CSV from /input, total it by region and month, and leave a
-- summary in /output (published with provenance when the run succeeds).
-- Run: forge-host run examples/lua-report.lua --input examples/data/sales.csv --out out/

-- The input files the host copied into /input: name, size, sha256, path.
local source
for _, file in ipairs(inputs()) do
  if file.name:match("%.csv$") then
    source = file
    break
  end
end
assert(source, "give a CSV file with --input")

-- A plain CSV (no quoted fields): the first line names the columns.
local function fields(line)
  local out = {}
  for field in (line:gsub("\r$", "") .. ","):gmatch("([^,]*),") do
    out[#out + 1] = field
  end
  return out
end

local rows, columns = {}, nil
for line in io.lines(source.path) do
  if columns == nil then
    columns = fields(line)
  elseif line ~= "" then
    local row = {}
    for i, value in ipairs(fields(line)) do
      row[columns[i]] = tonumber(value) or value
    end
    rows[#rows + 1] = row
  end
end
progress("read rows", #rows, #rows)

local function round(x)
  return math.floor(x * 100 + 0.5) / 100
end

local revenue, units, monthly = {}, {}, {}
for _, row in ipairs(rows) do
  local amount = row.units * row.unit_price
  revenue[row.region] = (revenue[row.region] or 0) + amount
  units[row.region] = (units[row.region] or 0) + row.units
  local month = row.date:sub(1, 7)
  monthly[month] = (monthly[month] or 0) + amount
end

local regions, months = {}, {}
for region in pairs(revenue) do
  regions[#regions + 1] = region
end
for month in pairs(monthly) do
  months[#months + 1] = month
end
table.sort(regions)
table.sort(months)

local by_region, by_month, best = json.array(), json.array(), nil
for _, region in ipairs(regions) do
  by_region[#by_region + 1] = { region = region, units = units[region], revenue = round(revenue[region]) }
  if best == nil or revenue[region] > revenue[best] then
    best = region
  end
end
for _, month in ipairs(months) do
  by_month[#by_month + 1] = { month = month, revenue = round(monthly[month]) }
end

local summary = {
  source = { name = source.name, sha256 = source.sha256 },
  rows = #rows,
  best_region = best,
  regions = by_region,
  months = by_month,
}
local out = assert(io.open("/output/summary.json", "w"))
assert(out:write(json.encode(summary), "\n"))
assert(out:close())

text(("%d rows, best region: %s"):format(#rows, best))
local totals = {}
for _, region in ipairs(regions) do
  totals[region] = round(revenue[region])
end
return { rows = #rows, best_region = best, revenue = totals }
