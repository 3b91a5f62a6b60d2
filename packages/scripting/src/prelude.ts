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

/** Arguments: null (a light userdata), HOOK_EVERY, instruction limit, time limit (s), call-depth limit, pattern steps limit, string bytes limit. */
export const PRELUDE = String.raw`
local null, HOOK_EVERY, INSTRUCTIONS_MAX, TIME_MAX, DEPTH_MAX, PATTERN_STEPS_MAX, STRING_BYTES_MAX = ...
local pattern_find, pattern_match, pattern_gmatch, pattern_gsub, pattern_steps = (function()
${PATTERNS}
end)()

local debug_sethook, debug_getinfo, debug_setupvalue = debug.sethook, debug.getinfo, debug.setupvalue
local debug_setmetatable, debug_getmetatable = debug.setmetatable, debug.getmetatable
local clock, collectgarbage = os.clock, collectgarbage
local error, type, select, next, pairs, ipairs = error, type, select, next, pairs, ipairs
local rawget, rawset, rawequal, rawlen = rawget, rawset, rawequal, rawlen
local setmetatable, getmetatable, tostring, pcall, xpcall = setmetatable, getmetatable, tostring, pcall, xpcall
local math_log, min, tointeger, tonumber = math.log, math.min, math.tointeger, tonumber
-- Named as in the libraries: Lua names a function in its argument errors after the variable it was called through.
local rep, find, match, gmatch, gsub = string.rep, string.find, string.match, string.gmatch, string.gsub
local sub, upper, lower, reverse, format = string.sub, string.upper, string.lower, string.reverse, string.format
local pack, packsize, unpack_string = string.pack, string.packsize, string.unpack
local utf8_len, utf8_offset, utf8_codes = utf8.len, utf8.offset, utf8.codes
local sort, insert, remove, move, concat, unpack = table.sort, table.insert, table.remove, table.move, table.concat, table.unpack

local INSTRUCTIONS_MESSAGE = 'instruction limit exceeded (' .. INSTRUCTIONS_MAX .. ' instructions)'
local TIME_MESSAGE = 'time limit exceeded (' .. (TIME_MAX * 1000) .. ' ms)'
local DEPTH_MESSAGE = 'call depth limit exceeded (' .. DEPTH_MAX .. ' calls)'
local MEMORY_MESSAGE = 'not enough memory'
local STRING_MESSAGE = 'string length limit exceeded (' .. STRING_BYTES_MAX .. ' bytes) in '
-- Patterns and pack formats cost C work per byte at each subject position or value: a much shorter bound.
local FORMAT_BYTES_MAX = STRING_BYTES_MAX // 64

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

-- Before a library call whose C work is this many steps (~30 ns each at worst): the hook does not run
-- inside C, so C work must not go on past the deadline, however few instructions surround it. The
-- clock is read once CLOCK_STEPS have been announced (~3 ms of C at worst), before the call.
local CLOCK_STEPS = 100000
local unclocked = 0
local function before_c(steps)
  unclocked = unclocked + steps
  if unclocked >= CLOCK_STEPS then
    unclocked = 0
    if clock() > deadline then fail(TIME_MESSAGE) end
  end
end

local function charge(units)
  used = used + units
  if used > INSTRUCTIONS_MAX then fail(INSTRUCTIONS_MESSAGE) end
  before_c(units)
end

-- The C work of one library call grows with the strings it takes or builds: bounded per call.
local function bound(bytes, name, max)
  if bytes > (max or STRING_BYTES_MAX) then fail(STRING_MESSAGE .. name) end
  before_c(bytes // 32)
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

-- Bytes of a string argument; a number stands for its text (at most 24 bytes), C converts it.
local function length(v)
  local kind = type(v)
  if kind == 'string' then return #v end
  if kind == 'number' then return 24 end
  return 0
end
local function text(v) if type(v) == 'number' then return tostring(v) end return v end
local function count(t) if type(t) == 'table' then return rawlen(t) end return 0 end

local safe_string = {}
for k, v in next, string do safe_string[k] = v end
safe_string.dump = nil
-- string.rep copies its string once per repetition (~20 ns each): many repetitions of a short string
-- are built as a block repeated (at most 4 KiB, about the square root of the count), so that the
-- copies are few and long (same result).
local REP_BLOCK_BYTES = 4096
local function block_size(whole, unit)
  local size = 1
  while size * size < whole and (size * 2) * unit <= REP_BLOCK_BYTES do size = size * 2 end
  return size
end
safe_string.rep = function(s, n, sep)
  local times = tonumber(n)
  if times ~= nil and times > 1 then
    local unit = length(s) + length(sep)
    bound(unit * times, 'string.rep')
    charge(unit * times // 64)
    local whole = tointeger(times)
    if whole ~= nil and whole >= 64 and type(s) == 'string' and unit > 0 and unit <= REP_BLOCK_BYTES // 8
      and (sep == nil or type(sep) == 'string') then
      -- rep(s, n, sep) = rep(s .. sep, n - 1) .. s, and a run of pieces is whole blocks and a remainder.
      local piece = sep == nil and s or s .. sep
      local runs = sep == nil and whole or whole - 1
      local per_block = block_size(runs, unit)
      local body = rep(rep(piece, per_block), runs // per_block) .. rep(piece, runs % per_block)
      if sep == nil then return body end
      return body .. s
    end
  end
  return rep(s, n, sep)
end
-- Patterns whose worst case on this subject is more than one C call may take run in the Lua matcher
-- (patterns.ts), under the hook. gsub builds each replacement in C too (~8 steps a match, 3 for a
-- replacement without '%').
local GSUB_MATCH_STEPS, GSUB_COPY_STEPS = 8, 3
-- s and p as C takes them: strings (numbers converted by text).
local function pattern_cost(s, p, anchors, name, per_byte)
  if type(s) ~= 'string' or type(p) ~= 'string' then return 0 end
  bound(#s, name)
  bound(#p, name, FORMAT_BYTES_MAX)
  local steps = pattern_steps(#s, p, anchors) + (#s + 1) * (per_byte or 0)
  before_c(steps)
  return steps
end
-- An optional integer argument as C takes it; false when it is not one (C then refuses it at once).
local function position(v)
  if v == nil then return nil end
  return tointeger(tonumber(v)) or false
end
-- C's find searches a pattern without special characters as plain text: at worst a comparison of
-- the whole pattern at each position (~12 bytes a step).
local SPECIALS = { '^', '$', '*', '+', '?', '.', '(', '[', '%', '-' }
local function is_plain(p)
  for i = 1, #SPECIALS do
    if find(p, SPECIALS[i], 1, true) ~= nil then return false end
  end
  return true
end
local function plain_steps(s, p)
  return (#s + 1) * (#p // 12 + 1)
end
-- A plain search longer than one C call may take: windows of start positions, one C call each,
-- the deadline checked before each (same result as one call). init is as C takes it. Windows
-- double from 64 positions, so that a near occurrence costs a short copy.
local function plain_find(s, p, init)
  local ls, lp = #s, #p
  local from = init or 1
  if from < 0 then from = from < -ls and 1 or ls + from + 1 elseif from == 0 then from = 1 end
  local per_position = lp // 12 + 1
  local width = PATTERN_STEPS_MAX // per_position
  local size = 64
  local last_start = ls - lp + 1
  while from <= last_start do
    if size > width then size = width > 1 and width or 1 end
    local to = min(from + size - 1, last_start)
    size = size * 2
    before_c((to - from + 1) * per_position)
    local i = find(sub(s, from, to + lp - 1), p, 1, true)
    if i ~= nil then return from + i - 1, from + i + lp - 2 end
    from = to + 1
  end
  return nil
end
-- gsub of a pattern without special characters and a string replacement, over a subject too long for
-- one C call: each occurrence is found by plain_find, the replacement made by C on the first one
-- (same result and errors as one call: C's gsub replaces the leftmost occurrences, without overlaps).
local function plain_gsub(s, p, repl, limit)
  local parts, np, n, src = {}, 0, 0, 1
  local replacement
  while limit == nil or n < limit do
    local start = plain_find(s, p, src)
    if start == nil then break end
    replacement = replacement or gsub(p, p, repl, 1)
    parts[np + 1], parts[np + 2] = sub(s, src, start - 1), replacement
    np, n, src = np + 2, n + 1, start + #p
  end
  parts[np + 1] = sub(s, src)
  return concat(parts), n
end
safe_string.find = function(s, p, init, plain, ...)
  s, p = text(s), text(p)
  charge(length(s) // 16)
  local searched = type(s) == 'string' and type(p) == 'string'
  if searched then bound(#p, 'string.find') end
  if searched and (plain or is_plain(p)) then
    bound(#s, 'string.find')
    local steps = plain_steps(s, p)
    local i = position(init)
    if #p > 0 and i ~= false and steps > PATTERN_STEPS_MAX then return plain_find(s, p, i) end
    before_c(steps)
  elseif pattern_cost(s, p, true, 'string.find') > PATTERN_STEPS_MAX then
    local i = position(init)
    if i ~= false then return pattern_find(s, p, i) end
  end
  return find(s, p, init, plain, ...)
end
safe_string.match = function(s, p, init, ...)
  s, p = text(s), text(p)
  charge(length(s) // 16)
  if pattern_cost(s, p, true, 'string.match') > PATTERN_STEPS_MAX then
    local i = position(init)
    if i ~= false then return pattern_match(s, p, i) end
  end
  return match(s, p, init, ...)
end
safe_string.gmatch = function(s, p, init, ...)
  s, p = text(s), text(p)
  charge(length(s) // 16)
  if pattern_cost(s, p, false, 'string.gmatch') > PATTERN_STEPS_MAX then
    local i = position(init)
    if i ~= false then return pattern_gmatch(s, p, i) end
  end
  return gmatch(s, p, init, ...)
end
safe_string.gsub = function(s, p, repl, n, ...)
  s, p = text(s), text(p)
  charge(length(s) // 16)
  local kind = type(repl)
  -- A function's replacements run Lua, which the hook sees; a string's or a table's are C work,
  -- less for a string without captures to expand.
  local per_byte = 0
  if kind == 'number' or (kind == 'string' and find(repl, '%', 1, true) == nil) then per_byte = GSUB_COPY_STEPS
  elseif kind == 'string' or kind == 'table' then per_byte = GSUB_MATCH_STEPS end
  if (per_byte > 0 or kind == 'function') and pattern_cost(s, p, true, 'string.gsub', per_byte) > PATTERN_STEPS_MAX then
    local limit = position(n)
    if limit ~= false then
      -- Without special characters, and without ')' (which the matcher refuses, find's plain search does not).
      if kind ~= 'table' and kind ~= 'function' and #p > 0 and is_plain(p) and find(p, ')', 1, true) == nil then
        return plain_gsub(s, p, repl, limit)
      end
      return pattern_gsub(s, p, repl, limit)
    end
  end
  return gsub(s, p, repl, n, ...)
end
-- One C pass over the subject (a few ns a byte).
safe_string.upper = function(s, ...) bound(length(s), 'string.upper') return upper(s, ...) end
safe_string.lower = function(s, ...) bound(length(s), 'string.lower') return lower(s, ...) end
safe_string.reverse = function(s, ...) bound(length(s), 'string.reverse') return reverse(s, ...) end
-- Its work is linear in the format and the strings it formats (%q writes up to 4 bytes a byte).
local function format_bytes(fmt, ...)
  local bytes, n = length(fmt), select('#', ...)
  if n <= 8 then
    for i = 1, n do bytes = bytes + length((select(i, ...))) end
    return bytes
  end
  local args = { ... }
  for i = 1, n do bytes = bytes + length(args[i]) end
  return bytes
end
safe_string.format = function(fmt, ...)
  bound(format_bytes(fmt, ...), 'string.format')
  return format(fmt, ...)
end
safe_string.pack = function(fmt, ...) bound(length(fmt), 'string.pack', FORMAT_BYTES_MAX) return pack(fmt, ...) end
safe_string.packsize = function(fmt, ...) bound(length(fmt), 'string.packsize', FORMAT_BYTES_MAX) return packsize(fmt, ...) end
safe_string.unpack = function(fmt, s, ...)
  bound(length(fmt), 'string.unpack', FORMAT_BYTES_MAX)
  return unpack_string(fmt, s, ...)
end

local safe_utf8 = {}
for k, v in next, utf8 do safe_utf8[k] = v end
safe_utf8.len = function(s, ...) bound(length(s), 'utf8.len') return utf8_len(s, ...) end
safe_utf8.offset = function(s, ...) bound(length(s), 'utf8.offset') return utf8_offset(s, ...) end
safe_utf8.codes = function(s, ...) bound(length(s), 'utf8.codes') return utf8_codes(s, ...) end

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
  utf8 = readonly(safe_utf8, 'utf8'), os = readonly({ time = os.time, clock = os.clock }, 'os'),
  null = null, append = append, erase = erase, array = array,
}
local env_mt = { __index = base, __metatable = false }

local function run(chunk, env)
  debug_setupvalue(chunk, 1, env)
  used, failure, error_line, unclocked = 0, nil, -1, 0
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
