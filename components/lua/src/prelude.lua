-- The Lua side of the forge-host Lua engine. Run once per run, before the script (after
-- strings.lua), with the native bridge `host` (bridge.rs), `json.null`, the metatable of
-- `json.array` and strings.lua's `settle` as its arguments. It defines the script's globals
-- (tools, state, text, progress, print, eprint, json,
-- ForgeError, inputs, os.time, os.clock, os.remove, os.rename), trims io, takes away what reaches
-- outside the sandbox, and returns the engine's private API. `host` is not reachable from the
-- script afterwards.
local host, null, array_meta, settle = ...

local error, getmetatable, ipairs, pcall, rawget, select, setmetatable, tonumber, tostring, type, xpcall =
  error, getmetatable, ipairs, pcall, rawget, select, setmetatable, tonumber, tostring, type, xpcall
local concat, remove, unpack = table.concat, table.remove, table.unpack
local tointeger = math.tointeger
local traceback = debug.traceback

--- The error every host-side failure is raised as: `.code` is a stable error code
--- (TOOL_FAILED, TOOL_DENIED, TOOL_NOT_FOUND, BUDGET_EXCEEDED, INVALID_INPUT), `.message` says
--- why. `pcall` returns it as is; `tostring(e)` is "CODE: message".
local ForgeError = { __name = "ForgeError" }
ForgeError.__tostring = function(e)
  return tostring(rawget(e, "code")) .. ": " .. tostring(rawget(e, "message"))
end
function ForgeError.new(code, message)
  return setmetatable({ code = code, message = message }, ForgeError)
end
function ForgeError.is(value)
  return getmetatable(value) == ForgeError
end

-- A native answers `true, value`, `false, code, message` (a host failure) or `false, nil,
-- message` (the script's mistake). Every API function calls this in tail position (`return
-- reply(...)`), so that level 2 is the script's line: Lua's tail calls replace the caller's frame.
local function reply(ok, a, b)
  if ok then
    return a
  end
  if a ~= nil then
    error(ForgeError.new(a, b), 2)
  end
  error(b, 2)
end

local function input_or_empty(input)
  if input == nil then
    return {}
  end
  return input
end

local function call(name, input)
  return reply(host.call(name, input_or_empty(input)))
end

-- Completions of begun calls that arrived while `gather` waited for its own, in arrival order;
-- `tools.wait` hands them out first.
local stash = {}

local function gather(calls)
  if type(calls) ~= "table" then
    error("tools.gather: expected a list of {name, input} tables", 2)
  end
  local count = #calls
  local responses, failures, waiting, pending = {}, {}, {}, 0
  for i = 1, count do
    local item = calls[i]
    if type(item) ~= "table" then
      error(("tools.gather: call %d is not a {name, input} table"):format(i), 2)
    end
    local ok, a, b = host.begin(item[1], input_or_empty(item[2]))
    if ok then
      waiting[a] = i
      pending = pending + 1
    elseif a ~= nil then
      failures[i] = ForgeError.new(a, b)
    else
      error(b, 2)
    end
  end
  while pending > 0 do
    local id, ok, a, b = host.wait()
    if id == nil then
      break
    end
    local i = waiting[id]
    if i == nil then
      stash[#stash + 1] = { id, ok, a, b }
    else
      waiting[id] = nil
      pending = pending - 1
      if ok then
        responses[i] = a
      else
        failures[i] = ForgeError.new(a, b)
      end
    end
  end
  for i = 1, count do
    if failures[i] ~= nil then
      error(failures[i], 2)
    end
    if responses[i] == nil then
      error(ForgeError.new("TOOL_FAILED", "the call was lost"), 2)
    end
  end
  return setmetatable(responses, array_meta)
end

local function wait()
  local id, ok, a, b
  local stashed = remove(stash, 1)
  if stashed ~= nil then
    id, ok, a, b = stashed[1], stashed[2], stashed[3], stashed[4]
  else
    id, ok, a, b = host.wait()
  end
  if id == nil then
    return nil
  end
  if ok then
    return id, a
  end
  return id, nil, ForgeError.new(a, b)
end

local members = {
  --- tools.call(name, input) -> response; raises a ForgeError when the call fails.
  call = function(name, input)
    return call(name, input)
  end,
  --- tools.gather({{name, input}, ...}) -> {response, ...}: the calls run concurrently; a
  --- failure raises the first failed call's ForgeError once every call finished.
  gather = gather,
  --- tools.begin(name, input) -> id: starts a call and returns at once.
  begin = function(name, input)
    return reply(host.begin(name, input_or_empty(input)))
  end,
  --- tools.wait() -> id, response | id, nil, ForgeError | nil: the next begun call to finish,
  --- in the order they finish; nil when no call is in flight.
  wait = wait,
  --- tools.list() -> {tool, ...}: name, description, effect, input_schema, function_path.
  list = function()
    return reply(host.list())
  end,
  --- tools.search(query [, limit]) -> tools whose name or description contains `query`.
  search = function(query, limit)
    return reply(host.search(query, limit))
  end,
  --- tools.describe(name) -> the tool, or nil.
  describe = function(name)
    return reply(host.describe(name))
  end,
}

-- Every tool is also a function, `tools.echo(input)` or `tools.fs.read_text_file(input)`, by
-- the function path the host gives it (so every engine maps names alike). The catalog is read
-- at the first such use. A tool whose path is a member's name (call, gather, ...) is reachable
-- through tools.call only.
local bound
local function bindings()
  if bound == nil then
    bound = {}
    for _, tool in ipairs(reply(host.list())) do
      local path, name = tool.function_path, tool.name
      local function fn(input)
        return call(name, input)
      end
      if #path == 1 then
        if bound[path[1]] == nil then
          bound[path[1]] = fn
        end
      elseif #path == 2 then
        local namespace = bound[path[1]]
        if namespace == nil then
          namespace = {}
          bound[path[1]] = namespace
        end
        if type(namespace) == "table" then
          namespace[path[2]] = fn
        end
      end
    end
  end
  return bound
end

local tools = setmetatable({}, {
  __index = function(_, key)
    local member = members[key]
    if member ~= nil then
      return member
    end
    if type(key) == "string" then
      return bindings()[key]
    end
    return nil
  end,
  __newindex = function()
    error("tools cannot be changed", 2)
  end,
  __metatable = "tools",
})

local state = {
  --- state.get(key) -> the value, or nil when the key has none.
  get = function(key)
    return reply(host.state_get(key))
  end,
  --- state.set(key, value): kept for the session when the run succeeds.
  set = function(key, value)
    if value == nil then
      error("state.set: the value must not be nil (state.delete removes a key)", 2)
    end
    return reply(host.state_set(key, value))
  end,
  --- state.delete(key)
  delete = function(key)
    return reply(host.state_delete(key))
  end,
  --- state.keys() -> every key with a value, sorted.
  keys = function()
    return reply(host.state_keys())
  end,
}

local function number_or_nil(what, v)
  if v == nil then
    return nil
  end
  if type(v) ~= "number" or v ~= v or v == math.huge or v == -math.huge then
    error(("progress: %s must be a finite number"):format(what), 3)
  end
  return v + 0.0
end

local function line(...)
  local n = select("#", ...)
  local parts = {}
  for i = 1, n do
    parts[i] = tostring((select(i, ...)))
  end
  return concat(parts, "\t") .. "\n"
end

local json = {
  null = null,
  --- json.array([t]) -> t, marked to be written as a JSON array even when empty.
  array = function(t)
    if t == nil then
      t = {}
    elseif type(t) ~= "table" then
      error("json.array: expected a table or nothing", 2)
    end
    local meta = getmetatable(t)
    if meta ~= nil and meta ~= array_meta then
      error("json.array: the table already has a metatable", 2)
    end
    return setmetatable(t, array_meta)
  end,
  --- json.encode(value) -> JSON text (the rules of the crate docs).
  encode = function(value)
    return reply(host.json_encode(value))
  end,
  --- json.decode(text) -> value; null is json.null, arrays are marked as arrays.
  decode = function(text)
    if type(text) ~= "string" then
      error("json.decode: expected a string", 2)
    end
    return reply(host.json_decode(text))
  end,
}

_G.tools = tools
_G.state = state
_G.json = json
_G.ForgeError = ForgeError
--- text(value): output meant for the caller (the run report's `text` list).
_G.text = function(value)
  return reply(host.text(value))
end
--- progress(message [, completed [, total]])
_G.progress = function(message, completed, total)
  host.progress(tostring(message), number_or_nil("completed", completed), number_or_nil("total", total))
end
_G.print = function(...)
  host.write(1, line(...))
end
--- eprint(...): print to stderr.
_G.eprint = function(...)
  host.write(2, line(...))
end

-- os: the clocks only. os.clock is the time since the run started (WASI has no CPU clock).
local host_time = host.time
_G.os = {
  time = function(t)
    if t ~= nil then
      error("os.time: only os.time() (the current time) is available", 2)
    end
    return host_time()
  end,
  clock = host.clock,
  difftime = function(a, b)
    return (a - (b or 0)) + 0.0
  end,
}

local function file_name(what, n, v)
  local kind = type(v)
  if kind == "number" then
    return tostring(v)
  end
  if kind ~= "string" then
    error(("bad argument #%d to '%s' (string expected, got %s)"):format(n, what, kind == "nil" and "no value" or kind), 3)
  end
  return v
end
--- os.remove(name) -> true | nil, "name: message", errno (a file, or an empty folder).
_G.os.remove = function(name)
  return host.remove(file_name("remove", 1, name))
end
--- os.rename(from, to) -> true | nil, message, errno.
_G.os.rename = function(from, to)
  return host.rename(file_name("rename", 1, from), file_name("rename", 2, to))
end

--- inputs() -> {{name, size, sha256, path}, ...}: the files the host copied into /input.
_G.inputs = function()
  return host.inputs()
end

-- What would reach outside: the loaders, and debug (whose traceback is kept above).
_G.dofile, _G.loadfile, _G.debug, _G.require, _G.package = nil, nil, nil, nil, nil

-- io: files reach only the WASI preopens (files.rs); there are no processes (io.popen), and
-- io.tmpfile's file is made in /work. Four fixes over omnilua's library, wrapped as the string
-- functions above are:
-- - file:close() and io.close() flush first and report a write the buffer held back (a full
--   disk: `nil, message, errno`), as C's fclose does; omnilua's close always answers true.
-- - a read count outside 0..CHUNK is read in CHUNK pieces: omnilua sizes its buffer by the count
--   before reading (read(2^30) on a small file would take 1 GiB) and truncates it to wasm32's
--   32 bits (read(2^32) would read nothing); a negative count is an error.
-- - lines() refuses such counts rather than misread them.
-- - an open that fails for want of descriptors (the host's --max-open-files) collects garbage
--   and tries once more: a file nothing refers to any longer is closed when it is collected,
--   and a script that forgets to close files should not run out at the 257th.
local CHUNK = 1 << 20
local io = _G.io
io.popen = nil
local file_methods = getmetatable(io.stdout).__index
local io_type, io_output = io.type, io.output
local raw_close, raw_flush, raw_read, raw_lines = file_methods.close, file_methods.flush, file_methods.read, file_methods.lines
local raw_io_read, raw_io_lines, raw_open = io.read, io.lines, io.open
local raw_input, raw_tmpfile = io.input, io.tmpfile
local pack, collectgarbage = table.pack, collectgarbage

-- Whether pcall's results say an open failed for want of descriptors.
local function out_of_descriptors(result)
  local text
  if result[1] then
    text = result[2] == nil and result[3] or nil
  else
    text = result[2]
  end
  return type(text) == "string"
    and (text:find("Disk quota exceeded", 1, true) or text:find("Too many open files", 1, true)) ~= nil
end

local function opening(name, raw)
  return function(...)
    local result = pack(pcall(raw, ...))
    if out_of_descriptors(result) then
      collectgarbage()
      collectgarbage()
      result = pack(pcall(raw, ...))
    end
    return settle(name, unpack(result, 1, result.n))
  end
end

local function counts_fit(...)
  for i = 1, select("#", ...) do
    local format = select(i, ...)
    if type(format) == "number" and not (format >= 0 and format <= CHUNK) then
      return false
    end
  end
  return true
end

-- read(file, format) for each format in turn, as C's g_read: the values up to the first that
-- fails (nil), or `nil, message, errno` for an error.
local function read_each(read, file, ...)
  local n = select("#", ...)
  local results = {}
  for i = 1, n do
    local format = select(i, ...)
    local value
    if type(format) == "number" and not (format >= 0 and format <= CHUNK) then
      local count = tointeger(format)
      if count == nil then
        error(("bad argument #%d to 'read' (number has no integer representation)"):format(i), 0)
      elseif count < 0 then
        error(("bad argument #%d to 'read' (the count must not be negative)"):format(i), 0)
      end
      local parts = {}
      while count > 0 do
        local want = count < CHUNK and count or CHUNK
        local part, message, code = read(file, want)
        if part == nil then
          if message ~= nil then
            return nil, message, code
          end
          break
        end
        parts[#parts + 1] = part
        count = count - #part
        if #part < want then
          break
        end
      end
      if #parts > 0 then
        value = concat(parts)
      end
    else
      local message, code
      value, message, code = read(file, format)
      if value == nil and message ~= nil then
        return nil, message, code
      end
    end
    results[i] = value
    if value == nil then
      return unpack(results, 1, i)
    end
  end
  return unpack(results, 1, n)
end

local function read_default(_, format)
  return raw_io_read(format)
end

local function close(file)
  if io_type(file) == "file" then
    local ok, message, code = raw_flush(file)
    if not ok then
      pcall(raw_close, file)
      return nil, message, code
    end
  end
  return settle("close", pcall(raw_close, file))
end

local function check_lines(...)
  if not counts_fit(...) then
    error(("bad argument to 'lines' (a count must be between 0 and %d; use read)"):format(CHUNK), 3)
  end
end

--- file:close() -> true | nil, message, errno
file_methods.close = function(file)
  return close(file)
end
file_methods.read = function(file, ...)
  if counts_fit(...) then
    return settle("read", pcall(raw_read, file, ...))
  end
  return settle("read", pcall(read_each, raw_read, file, ...))
end
file_methods.lines = function(file, ...)
  check_lines(...)
  return settle("lines", pcall(raw_lines, file, ...))
end
--- io.close([file]) -> as file:close(); the default output file without one.
io.close = function(file)
  if file == nil then
    file = io_output()
  end
  return close(file)
end
io.read = function(...)
  if counts_fit(...) then
    return settle("read", pcall(raw_io_read, ...))
  end
  return settle("read", pcall(read_each, read_default, nil, ...))
end
local lines_opening = opening("lines", raw_io_lines)
io.lines = function(name, ...)
  check_lines(...)
  return lines_opening(name, ...)
end
io.open = opening("open", raw_open)
io.input = opening("input", raw_input)
io.output = opening("output", io_output)
io.tmpfile = opening("tmpfile", raw_tmpfile)

-- The engine's private API (never a global).
local api = {}

local function is_stack_overflow(message)
  return message:find("stack overflow$") ~= nil or message:find("stack overflow %(") ~= nil
end

--- code ("" when the runner decides), forge_code, message of an uncaught error value.
local function describe(e)
  if getmetatable(e) == ForgeError then
    local code = rawget(e, "code")
    local ok, message = pcall(tostring, e)
    return "", type(code) == "string" and code or nil, ok and message or "ForgeError"
  end
  if type(e) == "string" then
    return is_stack_overflow(e) and "STACK_LIMIT" or "", nil, e
  end
  if type(e) == "number" then
    return "", nil, tostring(e)
  end
  local meta = getmetatable(e)
  if type(meta) == "table" and rawget(meta, "__tostring") ~= nil then
    local ok, message = pcall(tostring, e)
    if ok and type(message) == "string" then
      return "", nil, message
    end
  end
  if type(e) == "table" and type(rawget(e, "message")) == "string" then
    return "", nil, rawget(e, "message")
  end
  return "", nil, ("(error object is a %s value)"):format(type(e))
end

--- Runs the script's chunk: `true, result` or `false, code, forge_code, message, stack`.
function api.run(chunk)
  local stack
  local ok, result = xpcall(chunk, function(e)
    local ok_trace, trace = pcall(traceback, "", 2)
    stack = ok_trace and trace or nil
    return e
  end)
  if ok then
    return true, result
  end
  local code, forge_code, message = describe(result)
  return false, code, forge_code, message, stack
end

return api
