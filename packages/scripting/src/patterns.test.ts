import fc from 'fast-check';
import { ScriptRunner } from './runner.js';

/**
 * The Lua matcher (patterns.ts) against C's, on the same calls: one runner
 * never leaves C, the other always uses the Lua matcher. Results, captures,
 * positions and error messages must agree.
 */
const CASES: Array<[string, string, number?]> = [
  ['hello world', 'o'], ['hello world', 'l+'], ['hello world', '(h)(e)(l+)'], ['hello', '()ll()'], ['hello', '^h'], ['hello', '^e'],
  ['hello', 'o$'], ['hell$o', 'l$o'], ['  trim me  ', '^%s*(.-)%s*$'], ['key = value', '(%w+)%s*=%s*(%w+)'],
  ['THE (quick) fox', '%((%a+)%)'], ['f(a(b)c)d', '%b()'], ['f(a(b)c d', '%b()'], ['THE (quick) fox', '%f[%a]%a+'], ['hello', '%f[%a]%a+'],
  ['abc', '[a-c]+'], ['abc]', '[]]'], ['a-b', '[a%-]+'], ['x^y', '[%^x]+'], ['abc', '[^a]+'], ['ab-c', '[b-]+'],
  ['aaa', 'a-b'], ['aaab', 'a-b'], ['aaa', 'a*'], ['', 'a*'], ['abc', ''], ['abc', '.-'], ['abc', '.-$'], ['abc', 'x*'],
  ['hello hello', '(h%a+) %1'], ['abab', '(ab)%1'], ['x = 1, y = 2', '(%w+) = (%w+)'], ['color colour', 'colou?r'], ['ab', 'a?b?c?'],
  ['Tab\tLF\n 12 ab XY !?~', '%c'], ['Tab\tLF\n 12 ab XY !?~', '%d+'], ['Tab\tLF\n 12 ab XY !?~', '%l+'], ['Tab\tLF\n 12 ab XY !?~', '%u+'],
  ['Tab\tLF\n 12 ab XY !?~', '%p+'], ['Tab 12 ab XY fe', '%x+'], ['Tab 12 ab', '%S+'], ['Tab 12 ab', '%W+'], ['Tab 12 ab', '%D'],
  ['Tab 12 ab', '%A+'], ['Tab 12 ab', '%g+'], ['a.b', '%.'], ['a%b', '%%'], ['añb', '[^%w]+'], ['añb', '[\x80-\xff]+'],
  ['hello', 'l', 4], ['hello', 'l', -2], ['hello', 'l', 10], ['hello', 'l', -10], ['hello', '', 6], ['hello', '', 7], ['hello', 'l', 0],
  ['abc', '%'], ['abc', '[a'], ['abc', '(a'], ['abc', 'a)'], ['abc', '%1'], ['abc', '%b'], ['abc', '%f'], ['abc', '%fa'], ['abc', '(a)%2'],
  ['one two  three', '(%a+)'], ['a,b,,c', '([^,]*)'], ['aaa', '^a'], ['2024-01-15', '(%d+)-(%d+)-(%d+)'], ['x', '[%a-z]'],
];

const PROBE = `
local function strip(message) return (tostring(message):gsub('^prelude:%d+: ', ''):gsub('^script:%d+: ', '')) end
local function pack(...)
  local n = select('#', ...)
  local t = { n = n }
  for k = 1, n do local v = select(k, ...); t[k] = v == nil and 'nil' or v end
  return t
end
local function try(f)
  local ok, result = pcall(f)
  if ok then return result end
  return 'error: ' .. strip(result)
end
local out = {}
for i, c in ipairs(cases) do
  local s, p, init = c[1], c[2], c[3]
  out[i] = {
    find = try(function() return pack(string.find(s, p, init)) end),
    match = try(function() return pack(string.match(s, p, init)) end),
    gsub = try(function() return pack(string.gsub(s, p, '<%0>')) end),
    gsub_first = try(function() return pack(string.gsub(s, p, '[%1]', 1)) end),
    gsub_function = try(function() return pack(string.gsub(s, p, function(a, b) return b and (a .. '/' .. b) or nil end)) end),
    gsub_table = try(function() return pack(string.gsub(s, p, { hello = 'HI', a = false, b = 2 })) end),
    gmatch = try(function()
      local all = {}
      for a, b in string.gmatch(s, p, init) do all[#all + 1] = tostring(a) .. '|' .. tostring(b) end
      return all
    end),
  }
end
_doc.results = out
`;

describe('the Lua pattern matcher', () => {
  let inC: ScriptRunner;
  let inLua: ScriptRunner;

  beforeAll(async () => {
    [inC, inLua] = await Promise.all([ScriptRunner.create({ patternStepsMax: Number.MAX_SAFE_INTEGER }), ScriptRunner.create({ patternStepsMax: -1 })]);
  });

  afterAll(async () => {
    await Promise.all([inC.close(), inLua.close()]);
  });

  it('answers as C does: matches, captures, positions, replacements, errors', () => {
    const params = { cases: CASES.map(([s, p, init]) => (init === undefined ? [s, p] : [s, p, init])) };
    const c = inC.run({ body: PROBE, params, doc: {}, method: 'PUT' });
    const lua = inLua.run({ body: PROBE, params, doc: {}, method: 'PUT' });
    const results = c.results as unknown[];
    expect(results).toHaveLength(CASES.length);
    CASES.forEach((kase, i) => expect({ case: kase, result: (lua.results as unknown[])[i] }).toEqual({ case: kase, result: results[i] }));
  });

  it('answers as C does on random patterns and subjects', () => {
    const token = fc.constantFrom('a', 'b', ' ', '.', '%a', '%s', '%d', '[ab]', '[^a]', '[a-', ']', '(', ')', '()', '%1', '%2',
      '*', '+', '-', '?', '^', '$', '%b()', '%f[%a]', '%', '%%', '[%a1]');
    const pattern = fc.array(token, { minLength: 1, maxLength: 7 }).map((parts) => parts.join(''));
    const subject = fc.array(fc.constantFrom('a', 'b', ' ', '(', ')', '1', 'x'), { maxLength: 12 }).map((chars) => chars.join(''));
    const init = fc.option(fc.integer({ min: -14, max: 14 }), { nil: undefined });
    const cases = fc.sample(fc.tuple(subject, pattern, init), { numRuns: 400, seed: 7 });
    const params = { cases: cases.map(([s, p, i]) => (i === undefined ? [s, p] : [s, p, i])) };
    const c = inC.run({ body: PROBE, params, doc: {}, method: 'PUT' }).results as unknown[];
    const lua = inLua.run({ body: PROBE, params, doc: {}, method: 'PUT' }).results as unknown[];
    cases.forEach((kase, i) => expect({ case: kase, result: lua[i] }).toEqual({ case: kase, result: c[i] }));
  });

  it('bounds a pattern that backtracks badly: the budget stops it in time', async () => {
    const runner = await ScriptRunner.create({ timeMsMax: 500 });
    try {
      const started = performance.now();
      expect(() => runner.run({ body: "_doc.x = string.find(string.rep('a', 3000), '(.-)(.-)(.-)b')", doc: {}, method: 'PUT' }))
        .toThrow(/limit exceeded/);
      expect(performance.now() - started).toBeLessThan(600);
      // The everyday patterns stay in C and answer.
      expect(runner.run({ body: "_doc.t = (string.gsub(string.rep('a b ', 5000), '%s+', '_')):sub(1, 7)", doc: {}, method: 'PUT' })).toEqual({ t: 'a_b_a_b' });
      expect(runner.run({ body: "_doc.t = string.match('  padded  ', '^%s*(.-)%s*$')", doc: {}, method: 'PUT' })).toEqual({ t: 'padded' });
      // Past the C limit, the Lua matcher answers a trim of a few thousand bytes within the budget.
      expect(runner.run({ body: "_doc.t = #string.match(string.rep(' x ', 2000), '^%s*(.-)%s*$')", doc: {}, method: 'PUT' })).toEqual({ t: 5998 });
    } finally {
      await runner.close();
    }
  });
});
