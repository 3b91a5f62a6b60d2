/**
 * Lua's pattern matcher written in Lua (a port of lstrlib.c 5.4: find,
 * match, gmatch, gsub), for the sandbox. The C matcher backtracks inside one
 * library call, where the instruction count hook cannot see it: a pattern
 * like `(.-)(.-)(.-)x` on a few hundred bytes without `x` runs for seconds.
 * The prelude estimates each call's worst case, (subject length + 1) to the
 * power of the quantifiers that can backtrack (times 2 per `?`), at least
 * (subject length + 1) × pattern items, and above `patternStepsMax` (10⁶:
 * ~30 ms of C at worst) runs this matcher instead:
 * every step is Lua instructions, so the run's budget bounds it. Below, C
 * runs (measured: this matcher is tens of times slower).
 *
 * The chunk returns find, match, gmatch, gsub and the estimate; arguments
 * reach it already checked by the prelude (strings, integer positions). Its
 * error messages carry no position (C's name the caller); the script line
 * is found by the sandbox's message handler either way. Cost: about 1 µs per
 * subject byte for a trim (`^%s*(.-)%s*$`), so the default limit keeps
 * everyday patterns on subjects of a few thousand bytes in C.
 */
export const PATTERNS = String.raw`
local byte, sub, cfind, tostring, type, error, concat, unpack = string.byte, string.sub, string.find, tostring, type, error, table.concat, table.unpack
local CAP_UNFINISHED, CAP_POSITION = -1, -2
local MAXCAPTURES, MAXDEPTH = 32, 200

local function class_end(ms, pi)
  local p, pe = ms.p, ms.pe
  local c = byte(p, pi)
  pi = pi + 1
  if c == 37 then
    if pi >= pe then error("malformed pattern (ends with '%')", 0) end
    return pi + 1
  elseif c == 91 then
    if byte(p, pi) == 94 then pi = pi + 1 end
    repeat
      if pi >= pe then error("malformed pattern (missing ']')", 0) end
      local cc = byte(p, pi)
      pi = pi + 1
      if cc == 37 and pi < pe then pi = pi + 1 end
    until byte(p, pi) == 93
    return pi + 1
  end
  return pi
end

local function match_class(c, cl)
  local upper = cl >= 65 and cl <= 90
  local lower = upper and cl + 32 or cl
  local res
  if lower == 97 then res = (c >= 65 and c <= 90) or (c >= 97 and c <= 122)
  elseif lower == 99 then res = c < 32 or c == 127
  elseif lower == 100 then res = c >= 48 and c <= 57
  elseif lower == 103 then res = c >= 33 and c <= 126
  elseif lower == 108 then res = c >= 97 and c <= 122
  elseif lower == 112 then res = (c >= 33 and c <= 47) or (c >= 58 and c <= 64) or (c >= 91 and c <= 96) or (c >= 123 and c <= 126)
  elseif lower == 115 then res = c == 32 or (c >= 9 and c <= 13)
  elseif lower == 117 then res = c >= 65 and c <= 90
  elseif lower == 119 then res = (c >= 48 and c <= 57) or (c >= 65 and c <= 90) or (c >= 97 and c <= 122)
  elseif lower == 120 then res = (c >= 48 and c <= 57) or (c >= 97 and c <= 102) or (c >= 65 and c <= 70)
  else return cl == c end
  if upper then return not res end
  return res
end

-- pi: the '[' of the set; ec: its ']'.
local function match_bracket(ms, c, pi, ec)
  local p = ms.p
  local sig = true
  if byte(p, pi + 1) == 94 then
    sig = false
    pi = pi + 1
  end
  pi = pi + 1
  while pi < ec do
    local pc = byte(p, pi)
    if pc == 37 then
      pi = pi + 1
      if match_class(c, byte(p, pi)) then return sig end
      pi = pi + 1
    elseif byte(p, pi + 1) == 45 and pi + 2 < ec then
      if pc <= c and c <= byte(p, pi + 2) then return sig end
      pi = pi + 3
    else
      if pc == c then return sig end
      pi = pi + 1
    end
  end
  return not sig
end

local function single_match(ms, si, pi, ep)
  if si >= ms.se then return false end
  local c = byte(ms.s, si)
  local pc = byte(ms.p, pi)
  if pc == 46 then return true
  elseif pc == 37 then return match_class(c, byte(ms.p, pi + 1))
  elseif pc == 91 then return match_bracket(ms, c, pi, ep - 1)
  end
  return pc == c
end

local do_match

local function max_expand(ms, si, pi, ep)
  local i = 0
  while single_match(ms, si + i, pi, ep) do i = i + 1 end
  while i >= 0 do
    local res = do_match(ms, si + i, ep + 1)
    if res then return res end
    i = i - 1
  end
  return nil
end

local function min_expand(ms, si, pi, ep)
  while true do
    local res = do_match(ms, si, ep + 1)
    if res then return res end
    if single_match(ms, si, pi, ep) then si = si + 1 else return nil end
  end
end

local function start_capture(ms, si, pi, what)
  local level = ms.level + 1
  if level > MAXCAPTURES then error('too many captures', 0) end
  ms.cap_init[level] = si
  ms.cap_len[level] = what
  ms.level = level
  local res = do_match(ms, si, pi)
  if res == nil then ms.level = ms.level - 1 end
  return res
end

local function end_capture(ms, si, pi)
  local l
  for level = ms.level, 1, -1 do
    if ms.cap_len[level] == CAP_UNFINISHED then
      l = level
      break
    end
  end
  if l == nil then error('invalid pattern capture', 0) end
  ms.cap_len[l] = si - ms.cap_init[l]
  local res = do_match(ms, si, pi)
  if res == nil then ms.cap_len[l] = CAP_UNFINISHED end
  return res
end

local function match_capture(ms, si, digit)
  local l = digit - 48
  if l < 1 or l > ms.level or ms.cap_len[l] == CAP_UNFINISHED then error('invalid capture index %' .. l, 0) end
  local len, init = ms.cap_len[l], ms.cap_init[l]
  if len < 0 then return nil end
  if ms.se - si >= len and sub(ms.s, init, init + len - 1) == sub(ms.s, si, si + len - 1) then return si + len end
  return nil
end

local function match_balance(ms, si, pi)
  if pi >= ms.pe - 1 then error("malformed pattern (missing arguments to '%b')", 0) end
  local s = ms.s
  local b, e = byte(ms.p, pi), byte(ms.p, pi + 1)
  if si >= ms.se or byte(s, si) ~= b then return nil end
  local cont = 1
  si = si + 1
  while si < ms.se do
    local c = byte(s, si)
    if c == e then
      cont = cont - 1
      if cont == 0 then return si + 1 end
    elseif c == b then
      cont = cont + 1
    end
    si = si + 1
  end
  return nil
end

do_match = function(ms, si, pi)
  ms.depth = ms.depth - 1
  if ms.depth == 0 then error('pattern too complex', 0) end
  local p, pe = ms.p, ms.pe
  while pi ~= pe do
    local pc = byte(p, pi)
    local next = byte(p, pi + 1)
    if pc == 40 then
      if next == 41 then si = start_capture(ms, si, pi + 2, CAP_POSITION)
      else si = start_capture(ms, si, pi + 1, CAP_UNFINISHED) end
      break
    elseif pc == 41 then
      si = end_capture(ms, si, pi + 1)
      break
    elseif pc == 36 and pi + 1 == pe then
      if si ~= ms.se then si = nil end
      break
    elseif pc == 37 and next == 98 then
      si = match_balance(ms, si, pi + 2)
      if si == nil then break end
      pi = pi + 4
    elseif pc == 37 and next == 102 then
      pi = pi + 2
      if byte(p, pi) ~= 91 then error("missing '[' after '%f' in pattern", 0) end
      local ep = class_end(ms, pi)
      local previous = si == 1 and 0 or byte(ms.s, si - 1)
      local current = byte(ms.s, si) or 0
      if not match_bracket(ms, previous, pi, ep - 1) and match_bracket(ms, current, pi, ep - 1) then
        pi = ep
      else
        si = nil
        break
      end
    elseif pc == 37 and next ~= nil and next >= 48 and next <= 57 then
      si = match_capture(ms, si, next)
      if si == nil then break end
      pi = pi + 2
    else
      local ep = class_end(ms, pi)
      local quantifier = byte(p, ep)
      if not single_match(ms, si, pi, ep) then
        if quantifier == 42 or quantifier == 63 or quantifier == 45 then
          pi = ep + 1
        else
          si = nil
          break
        end
      elseif quantifier == 63 then
        local res = do_match(ms, si + 1, ep + 1)
        if res then
          si = res
          break
        end
        pi = ep + 1
      elseif quantifier == 43 then
        si = max_expand(ms, si + 1, pi, ep)
        break
      elseif quantifier == 42 then
        si = max_expand(ms, si, pi, ep)
        break
      elseif quantifier == 45 then
        si = min_expand(ms, si, pi, ep)
        break
      else
        si = si + 1
        pi = ep
      end
    end
  end
  ms.depth = ms.depth + 1
  return si
end

local function state(s, p)
  return { s = s, se = #s + 1, p = p, pe = #p + 1, level = 0, cap_init = {}, cap_len = {}, depth = MAXDEPTH }
end

local function reset(ms)
  ms.level = 0
  ms.depth = MAXDEPTH
end

-- Capture i (1-based) of the match [s_start, s_end); the whole match when there are no captures.
local function capture(ms, i, s_start, s_end)
  if i > ms.level then
    if i ~= 1 then error('invalid capture index %' .. i, 0) end
    return sub(ms.s, s_start, s_end - 1)
  end
  local len, init = ms.cap_len[i], ms.cap_init[i]
  if len == CAP_UNFINISHED then error('unfinished capture', 0) end
  if len == CAP_POSITION then return init end
  return sub(ms.s, init, init + len - 1)
end

local function captures(ms, s_start, s_end, whole)
  local n = ms.level
  if n == 0 then
    if whole then return sub(ms.s, s_start, s_end - 1) end
    return
  end
  local out = {}
  for i = 1, n do out[i] = capture(ms, i, s_start, s_end) end
  return unpack(out, 1, n)
end

local function start_of(init, length)
  if init > 0 then return init end
  if init == 0 or init < -length then return 1 end
  return length + init + 1
end

local function find_aux(is_find, s, p, init)
  init = start_of(init or 1, #s)
  if init > #s + 1 then return nil end
  -- As C: find with a pattern without special characters is a plain search.
  if is_find and cfind(p, '[%^%$%*%+%?%.%(%[%%%-]') == nil then return cfind(s, p, init, true) end
  local pi = 1
  local anchor = byte(p, 1) == 94
  if anchor then pi = 2 end
  local ms = state(s, p)
  local si = init
  repeat
    reset(ms)
    local e = do_match(ms, si, pi)
    if e then
      if is_find then return si, e - 1, captures(ms, si, e, false) end
      return captures(ms, si, e, true)
    end
    si = si + 1
  until si > ms.se or anchor
  return nil
end

local function find(s, p, init) return find_aux(true, s, p, init) end
local function match(s, p, init) return find_aux(false, s, p, init) end

local function gmatch(s, p, init)
  local length = #s
  init = start_of(init or 1, length)
  if init > length + 1 then init = length + 2 end
  local ms = state(s, p)
  local src, last = init, nil
  return function()
    while src <= ms.se do
      reset(ms)
      local e = do_match(ms, src, 1)
      if e and e ~= last then
        local from = src
        src, last = e, e
        return captures(ms, from, e, true)
      end
      src = src + 1
    end
    return nil
  end
end

-- The replacement of the match [s_start, e) and whether it changed the text.
local function replacement(ms, s_start, e, repl, kind)
  local value
  if kind == 'function' then
    value = repl(captures(ms, s_start, e, true))
  elseif kind == 'table' then
    value = repl[capture(ms, 1, s_start, e)]
  else
    local text = tostring(repl)
    local out, n, from = {}, 0, 1
    while true do
      local at = cfind(text, '%', from, true)
      if at == nil then break end
      n = n + 1
      out[n] = sub(text, from, at - 1)
      local d = byte(text, at + 1)
      n = n + 1
      if d == 37 then out[n] = '%'
      elseif d == 48 then out[n] = sub(ms.s, s_start, e - 1)
      elseif d ~= nil and d >= 49 and d <= 57 then out[n] = tostring(capture(ms, d - 48, s_start, e))
      else error("invalid use of '%' in replacement string", 0) end
      from = at + 2
    end
    n = n + 1
    out[n] = sub(text, from)
    return concat(out), true
  end
  if not value then return sub(ms.s, s_start, e - 1), false end
  local t = type(value)
  if t ~= 'string' and t ~= 'number' then error('invalid replacement value (a ' .. t .. ')', 0) end
  return tostring(value), true
end

local function gsub(s, p, repl, max_n)
  local kind = type(repl)
  local length = #s
  max_n = max_n or length + 1
  local pi = 1
  local anchor = byte(p, 1) == 94
  if anchor then pi = 2 end
  local ms = state(s, p)
  local parts, np = {}, 0
  local src, last, n, changed, copied = 1, nil, 0, false, 1
  while n < max_n do
    reset(ms)
    local e = do_match(ms, src, pi)
    if e and e ~= last then
      n = n + 1
      local text, replaced = replacement(ms, src, e, repl, kind)
      if replaced then changed = true end
      if src > copied then
        np = np + 1
        parts[np] = sub(s, copied, src - 1)
      end
      np = np + 1
      parts[np] = text
      src, last, copied = e, e, e
    elseif src < ms.se then
      src = src + 1
    else
      break
    end
    if anchor then break end
  end
  if not changed then return s, n end
  np = np + 1
  parts[np] = sub(s, copied)
  return concat(parts), n
end

-- class_end for the estimate: nil instead of an error for a malformed class.
local function class_end_or_nil(p, lp, i)
  local c = byte(p, i)
  i = i + 1
  if c == 37 then
    if i > lp then return nil end
    return i + 1
  elseif c == 91 then
    if byte(p, i) == 94 then i = i + 1 end
    repeat
      if i > lp then return nil end
      local cc = byte(p, i)
      i = i + 1
      if cc == 37 and i <= lp then i = i + 1 end
    until byte(p, i) == 93
    return i + 1
  end
  return i
end

-- The worst case of the C matcher for this subject length: (length + 1) to the power of the
-- items quantified with * + - that more pattern follows (each can backtrack over the whole
-- subject), plus one for an unanchored search and per %b or back-reference, times 2 per '?'.
-- A linear pattern still tries each of its items at each position: (length + 1) * items.
-- A malformed pattern is left to C, which refuses it at once (0).
local function steps(length, p, anchored)
  local lp = #p
  local i = 1
  local power = anchored and 0 or 1
  local doubling = 0
  local items = 0
  if anchored and byte(p, 1) == 94 then i = 2 end
  local pending = false
  while i <= lp do
    local c = byte(p, i)
    if c == 40 or c == 41 then
      i = i + 1
    elseif c == 36 and i == lp then
      i = i + 1
    else
      items = items + 1
      if pending then
        power = power + 1
        pending = false
      end
      local e
      local d = byte(p, i + 1)
      if c == 37 and d == 98 then
        power = power + 1
        e = nil
        i = i + 4
      elseif c == 37 and d == 102 then
        if byte(p, i + 2) ~= 91 then return 0 end
        local after = class_end_or_nil(p, lp, i + 2)
        if after == nil then return 0 end
        e = nil
        i = after
      elseif c == 37 and d ~= nil and d >= 48 and d <= 57 then
        power = power + 1
        e = nil
        i = i + 2
      else
        e = class_end_or_nil(p, lp, i)
        if e == nil then return 0 end
      end
      if e ~= nil then
        local q = byte(p, e)
        if q == 42 or q == 43 or q == 45 then
          pending = true
          i = e + 1
        elseif q == 63 then
          doubling = doubling + 1
          i = e + 1
        else
          i = e
        end
      end
    end
  end
  local linear = (length + 1) * items
  if power <= 1 and doubling == 0 then return linear end
  local backtracking = (length + 1) ^ power * 2 ^ doubling
  if backtracking > linear then return backtracking end
  return linear
end

return find, match, gmatch, gsub, steps
`;
