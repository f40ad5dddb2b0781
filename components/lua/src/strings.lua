-- Run before prelude.lua (and under the same chunk name, so errors read alike): `load` takes
-- source text only, `string.dump` goes, and the string functions omnilua gets wrong on
-- wasm32 are wrapped. It takes no arguments and returns `settle`,
-- which prelude.lua's io wrappers share.

local error, pcall, select, tonumber, tostring, type = error, pcall, select, tonumber, tostring, type
local tointeger = math.tointeger

-- Source text only: a binary chunk could break the VM's invariants.
local raw_load = load
_G.load = function(...)
  local chunk, name, _, env = ...
  if select("#", ...) >= 4 then
    return raw_load(chunk, name, "t", env)
  end
  return raw_load(chunk, name, "t")
end
string.dump = nil

-- omnilua turns Lua integers into wasm32's 32-bit usize with `as`, so 2^32 + 1 becomes 1:
-- ("abc"):sub(2^32 + 1) would be "abc", string.unpack would read from the wrong place and
-- ("x"):rep(2^33) would divide by zero. Positions past +-2^31 are clamped (a string is shorter
-- than that, so the answer is Lua's), and a repetition longer than the longest string wasm32
-- can hold is refused, as Lua refuses one past its largest string (one within 64 KiB of 2 GiB
-- already fails in Rust's allocator, before the host's memory limit can see it). The originals
-- run under pcall so that their errors point at the script's line and name the function, as if
-- the script had called them directly.
local LIMIT = 0x7fffffff
local LONGEST = 0x7fff0000
local function position(v)
  local n = v
  if type(n) ~= "number" then
    if v == nil then
      return nil
    end
    n = tonumber(n)
    if n == nil then
      return v
    end
  end
  if (n > LIMIT or n < -LIMIT) and tointeger(n) ~= nil then
    return n > 0 and LIMIT or -LIMIT
  end
  return v
end
-- Called in tail position by each wrapper, so level 2 is the script's line.
local function settle(name, ok, ...)
  if ok then
    return ...
  end
  local e = ...
  if type(e) ~= "string" then
    error(e, 0)
  end
  e = e:gsub("^forge%-prelude:%d+: ", "", 1):gsub("to '[^']*' %(", "to '" .. name .. "' (", 1)
  error(e, 2)
end
local function width(s, sep)
  return #tostring(s) + (sep == nil and 0 or #tostring(sep))
end
local rep, sub, byte, find = string.rep, string.sub, string.byte, string.find
local match, gmatch, unpack_string = string.match, string.gmatch, string.unpack
string.rep = function(s, n, sep)
  local count = tointeger(tonumber(n) or n)
  if count ~= nil and count > 1 and (s ~= nil or sep ~= nil) then
    local w = width(s, sep)
    if w == 0 then
      return ""
    end
    if count > LONGEST // w then
      error("resulting string too large", 2)
    end
  end
  return settle("rep", pcall(rep, s, n, sep))
end
string.sub = function(s, i, j)
  return settle("sub", pcall(sub, s, position(i), position(j)))
end
string.byte = function(s, i, j)
  return settle("byte", pcall(byte, s, position(i), position(j)))
end
string.find = function(s, pattern, init, plain)
  return settle("find", pcall(find, s, pattern, position(init), plain))
end
string.match = function(s, pattern, init)
  return settle("match", pcall(match, s, pattern, position(init)))
end
string.gmatch = function(s, pattern, init)
  return settle("gmatch", pcall(gmatch, s, pattern, position(init)))
end
string.unpack = function(format, s, pos)
  return settle("unpack", pcall(unpack_string, format, s, position(pos)))
end

return settle
