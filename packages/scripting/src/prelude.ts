/**
 * The host prelude: Lua that runs once per Lua state, with the whole standard
 * library open, before any script. It keeps what the host needs (debug hooks,
 * os.clock…) in locals, builds the sandbox every script runs in, and returns
 * the host's entry points. Then it empties the real globals table: nothing a
 * script can reach leads back to `debug`, `io`, `os`, `load` or `require`.
 *
 * Budgets (API.md §13): a count hook, installed by `run` before the script
 * and invisible to it, charges instructions, checks the time and the call
 * depth every HOOK_EVERY instructions. Library functions whose C work grows
 * with their input (sorting, shifting, repeating, scanning) are charged in
 * instruction units too, since the hook does not see C code; a pattern whose
 * backtracking could be long on its subject runs in the Lua matcher of
 * patterns.ts instead of C. Once a budget is overrun the failure is final:
 * the sandbox's `pcall`/`xpcall` rethrow it.
 *
 * Isolation between runs: each run gets a fresh environment table whose
 * metatable reads the shared base; library tables are read-only proxies; the
 * metatables of strings, nil, null and document tables are protected; `__gc`
 * metatables are refused, so no user code can run outside its own run.
 */

import { PATTERNS } from './patterns.js';

/** Arguments: null (a light userdata), HOOK_EVERY, instruction limit, time limit (s), call-depth limit, pattern steps limit. */
export const PRELUDE = String.raw`
local null, HOOK_EVERY, INSTRUCTIONS_MAX, TIME_MAX, DEPTH_MAX, PATTERN_STEPS_MAX = ...
local pattern_find, pattern_match, pattern_gmatch, pattern_gsub, pattern_steps = (function()
${PATTERNS}
end)()

local debug_sethook, debug_getinfo, debug_setupvalue = debug.sethook, debug.getinfo, debug.setupvalue
local debug_setmetatable, debug_getmetatable = debug.setmetatable, debug.getmetatable
local clock, collectgarbage = os.clock, collectgarbage
local error, type, select, next, pairs, ipairs = error, type, select, next, pairs, ipairs
local rawget, rawset, rawequal, rawlen = rawget, rawset, rawequal, rawlen
local setmetatable, getmetatable, tostring, pcall, xpcall = setmetatable, getmetatable, tostring, pcall, xpcall
local math_log = math.log
-- Named as in the libraries: Lua names a function in its argument errors after the variable it was called through.
local rep, find, match, gmatch, gsub = string.rep, string.find, string.match, string.gmatch, string.gsub
local sort, insert, remove, move, concat, unpack = table.sort, table.insert, table.remove, table.move, table.concat, table.unpack

local INSTRUCTIONS_MESSAGE = 'instruction limit exceeded (' .. INSTRUCTIONS_MAX .. ' instructions)'
local TIME_MESSAGE = 'time limit exceeded (' .. (TIME_MAX * 1000) .. ' ms)'
local DEPTH_MESSAGE = 'call depth limit exceeded (' .. DEPTH_MAX .. ' calls)'
local MEMORY_MESSAGE = 'not enough memory'

-- Per run.
local used, deadline = 0, 0
local failure = nil
local error_line = -1

local function fail(message)
  failure = message
  error(message, 0)
end

local function hook()
  if failure ~= nil then error(failure, 0) end
  used = used + HOOK_EVERY
  if used > INSTRUCTIONS_MAX then fail(INSTRUCTIONS_MESSAGE) end
  if clock() > deadline then fail(TIME_MESSAGE) end
  -- Levels 1 and 2 are this hook and the running function.
  if debug_getinfo(DEPTH_MAX + 2, '') ~= nil then fail(DEPTH_MESSAGE) end
end

local function charge(units)
  used = used + units
  if used > INSTRUCTIONS_MAX then fail(INSTRUCTIONS_MESSAGE) end
end

-- A budget failure (or an exhausted memory) caught by a script's pcall is raised again.
local function guard(ok, ...)
  if failure ~= nil then error(failure, 0) end
  if not ok and rawequal((...), MEMORY_MESSAGE) then fail(MEMORY_MESSAGE) end
  return ok, ...
end
local function safe_pcall(f, ...) return guard(pcall(f, ...)) end
local function safe_xpcall(f, handler, ...) return guard(xpcall(f, handler, ...)) end

local protected = setmetatable({}, { __mode = 'k' })
local function readonly(source, name)
  local proxy = {}
  protected[proxy] = true
  return setmetatable(proxy, {
    __index = source,
    __newindex = function() error(name .. ' is read-only', 2) end,
    __pairs = function() return next, source, nil end,
    __metatable = false,
  })
end
local function safe_rawset(t, k, v)
  if protected[t] then error('table is read-only', 2) end
  return rawset(t, k, v)
end
local function safe_setmetatable(t, mt)
  if type(mt) == 'table' and rawget(mt, '__gc') ~= nil then error('__gc metamethods are not allowed in scripts', 2) end
  return setmetatable(t, mt)
end

local function length(v) if type(v) == 'string' then return #v end return 0 end
local function count(t) if type(t) == 'table' then return rawlen(t) end return 0 end

local safe_string = {}
for k, v in next, string do safe_string[k] = v end
safe_string.dump = nil
safe_string.rep = function(s, n, sep)
  if type(n) == 'number' and n > 1 then charge((length(s) + length(sep)) * n // 64) end
  return rep(s, n, sep)
end
-- Patterns whose worst case on this subject is large run in the Lua matcher (patterns.ts), under the hook.
local tointeger, tonumber_ = math.tointeger, tonumber
local function risky(s, p, anchors)
  return type(s) == 'string' and type(p) == 'string' and pattern_steps(#s, p, anchors) > PATTERN_STEPS_MAX
end
-- An optional integer argument as C takes it; false when it is not one (C then refuses it at once).
local function position(v)
  if v == nil then return nil end
  return tointeger(tonumber_(v)) or false
end
safe_string.find = function(s, p, init, plain, ...)
  charge(length(s) // 16)
  if not plain and risky(s, p, true) then
    local i = position(init)
    if i ~= false then return pattern_find(s, p, i) end
  end
  return find(s, p, init, plain, ...)
end
safe_string.match = function(s, p, init, ...)
  charge(length(s) // 16)
  if risky(s, p, true) then
    local i = position(init)
    if i ~= false then return pattern_match(s, p, i) end
  end
  return match(s, p, init, ...)
end
safe_string.gmatch = function(s, p, init, ...)
  charge(length(s) // 16)
  if risky(s, p, false) then
    local i = position(init)
    if i ~= false then return pattern_gmatch(s, p, i) end
  end
  return gmatch(s, p, init, ...)
end
safe_string.gsub = function(s, p, repl, n, ...)
  charge(length(s) // 16)
  local kind = type(repl)
  if (kind == 'string' or kind == 'number' or kind == 'table' or kind == 'function') and risky(s, p, true) then
    local limit = position(n)
    if limit ~= false then return pattern_gsub(s, p, repl, limit) end
  end
  return gsub(s, p, repl, n, ...)
end

local safe_table = {}
for k, v in next, table do safe_table[k] = v end
safe_table.sort = function(t, ...)
  local n = count(t)
  if n > 1 then charge(n * math_log(n, 2) * 2 // 1) end
  return sort(t, ...)
end
safe_table.insert = function(t, ...)
  if select('#', ...) >= 2 then charge(count(t)) end
  return insert(t, ...)
end
safe_table.remove = function(t, pos, ...)
  if pos ~= nil then charge(count(t)) end
  return remove(t, pos, ...)
end
safe_table.move = function(a, f, e, ...)
  if type(f) == 'number' and type(e) == 'number' and e > f then charge(e - f) end
  return move(a, f, e, ...)
end
safe_table.concat = function(t, ...) charge(count(t)) return concat(t, ...) end
safe_table.unpack = function(t, i, j, ...)
  charge((type(j) == 'number' and j or count(t)) - (type(i) == 'number' and i or 1))
  return unpack(t, i, j, ...)
end

-- Legacy list and object operations (ChaiScript), callable with '.' or ':'.
local function equal(a, b, depth)
  if rawequal(a, b) then return true end
  if type(a) ~= 'table' or type(b) ~= 'table' then return a == b end
  depth = (depth or 0) + 1
  if depth > 128 then return false end
  for k, v in next, a do
    if not equal(v, rawget(b, k), depth) then return false end
  end
  for k in next, b do
    if rawget(a, k) == nil then return false end
  end
  return true
end

local array_mt, object_mt = {}, {}

local function erase_value(list, value)
  local n, j = rawlen(list), 1
  for i = 1, n do
    local v = rawget(list, i)
    if not equal(v, value) then
      rawset(list, j, v)
      j = j + 1
    end
  end
  for i = j, n do rawset(list, i, nil) end
end

local function append(list, value)
  if type(list) ~= 'table' then error('append expects a list', 2) end
  rawset(list, rawlen(list) + 1, value)
end
local function erase(t, value)
  if type(t) ~= 'table' then error('erase expects a list or an object', 2) end
  local mt = debug_getmetatable(t)
  if mt == array_mt or (mt ~= object_mt and type(value) ~= 'string') then erase_value(t, value) else rawset(t, value, nil) end
end

-- The method form: list.append(v) passes v alone, list:append(v) passes the list first.
local function bound(t, operation)
  return function(...)
    local a, b = ...
    if select('#', ...) >= 2 and rawequal(a, t) then a = b end
    return operation(t, a)
  end
end
array_mt.__index = function(list, key)
  if key == 'append' then return bound(list, append) end
  if key == 'erase' then return bound(list, erase_value) end
  return nil
end
array_mt.__metatable = 'array'
object_mt.__index = function(object, key)
  if key == 'erase' then return bound(object, function(t, name) rawset(t, name, nil) end) end
  return nil
end
object_mt.__metatable = 'object'

local function array(...)
  return setmetatable({ ... }, array_mt)
end

-- Arithmetic on a missing field (nil) counts it as 0: _doc.n = _old_doc.n + 1 gives 1.
local function zero(v) if v == nil then return 0 end return v end
debug_setmetatable(nil, {
  __add = function(a, b) return zero(a) + zero(b) end,
  __sub = function(a, b) return zero(a) - zero(b) end,
  __mul = function(a, b) return zero(a) * zero(b) end,
  __div = function(a, b) return zero(a) / zero(b) end,
  __mod = function(a, b) return zero(a) % zero(b) end,
  __pow = function(a, b) return zero(a) ^ zero(b) end,
  __idiv = function(a, b) return zero(a) // zero(b) end,
  __unm = function() return 0 end,
  __metatable = false,
})
debug_setmetatable(null, { __tostring = function() return 'null' end, __name = 'null', __metatable = false })
local string_mt = getmetatable('')
string_mt.__index = safe_string
string_mt.__metatable = false

local base = {
  _VERSION = _VERSION, assert = assert, error = error, getmetatable = getmetatable, ipairs = ipairs, next = next,
  pairs = pairs, pcall = safe_pcall, xpcall = safe_xpcall, rawequal = rawequal, rawget = rawget, rawlen = rawlen,
  rawset = safe_rawset, select = select, setmetatable = safe_setmetatable, tonumber = tonumber, tostring = tostring,
  type = type,
  math = readonly(math, 'math'), string = readonly(safe_string, 'string'), table = readonly(safe_table, 'table'),
  utf8 = readonly(utf8, 'utf8'), os = readonly({ time = os.time, clock = os.clock }, 'os'),
  null = null, append = append, erase = erase, array = array,
}
local env_mt = { __index = base, __metatable = false }

local function run(chunk, env)
  debug_setupvalue(chunk, 1, env)
  used, failure, error_line = 0, nil, -1
  deadline = clock() + TIME_MAX
  debug_sethook(hook, '', HOOK_EVERY)
  local result = chunk()
  debug_sethook()
  return result, rawget(env, '_doc')
end

-- The message handler of the host's call: notes the script line the error came from.
local function on_error(message)
  debug_sethook()
  -- Deep enough to reach the script from inside the Lua pattern matcher's recursion (200 levels).
  for level = 2, 260 do
    local info = debug_getinfo(level, 'Sl')
    if info == nil then break end
    if info.source == '=script' then
      error_line = info.currentline
      break
    end
  end
  return message
end

local function last_failure()
  return error_line, failure
end

local function collect()
  collectgarbage('collect')
end

local globals = _G
for k in next, globals, nil do globals[k] = nil end
return run, on_error, last_failure, collect, env_mt, array_mt, object_mt
`;

/** Chunk name of every script: Lua prefixes its messages with `script:<line>:`. */
export const SCRIPT_CHUNK_NAME = '=script';
