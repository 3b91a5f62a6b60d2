import { TesseraError } from '@tessera/errors';
import { ScriptRunner, type ScriptRun } from './runner.js';

let runner: ScriptRunner;

beforeAll(async () => {
  // A shorter time budget than the default keeps the abuse cases quick; the instruction budget is the default.
  runner = await ScriptRunner.create({ timeMsMax: 500 });
});

afterAll(async () => {
  await runner.close();
});

function run(body: string, extra: Partial<ScriptRun> = {}): Record<string, unknown> {
  return runner.run({ body, doc: {}, method: 'PUT', ...extra });
}

function failure(body: string, extra: Partial<ScriptRun> = {}): TesseraError {
  try {
    run(body, extra);
  } catch (err) {
    expect(err).toBeInstanceOf(TesseraError);
    return err as TesseraError;
  }
  throw new Error(`the script did not fail: ${body}`);
}

describe('values crossing into Lua and back', () => {
  const doc = {
    title: 'Añejo “quoted” ☃', count: 7, big: 2 ** 53 - 1, negative: -3, price: 9.5, zero: 0, yes: true, no: false, nothing: null,
    tags: ['a', 'b'], empty: [], object: {}, nested: { deep: [1, [2, { x: 'y' }]], n: null }, long: 'x'.repeat(5000),
  };

  it('returns an untouched document unchanged, types and key order included', () => {
    const out = run('', { doc });
    expect(out).toEqual(doc);
    expect(Object.keys(out)).toEqual(Object.keys(doc));
    expect(JSON.stringify(out)).toBe(JSON.stringify(doc));
  });

  it('keeps integers integers and floats floats inside Lua', () => {
    const out = run('_doc.types = { math.type(_doc.count), math.type(_doc.price), math.type(_doc.big) }; _doc.label = "n" .. _doc.count', { doc });
    expect(out.types).toEqual(['integer', 'float', 'integer']);
    expect(out.label).toBe('n7');
    expect(run('_doc.half = 7 // 2; _doc.third = 1 / 4; _doc.whole = 2.0', { doc: {} })).toEqual({ half: 3, third: 0.25, whole: 2 });
  });

  it('gives arrays 1-based indexes and keeps nested shapes', () => {
    const out = run('_doc.first = _doc.tags[1]; _doc.size = #_doc.tags; _doc.inner = _doc.nested.deep[2][2].x', { doc });
    expect(out).toMatchObject({ first: 'a', size: 2, inner: 'y' });
  });

  it('turns tables with keys 1..n into arrays, other tables into objects', () => {
    const out = run(`
      _doc.list = { 'x', 'y', 'z' }
      local backwards = {}; backwards[3] = 'c'; backwards[2] = 'b'; backwards[1] = 'a'
      _doc.backwards = backwards
      _doc.sparse = { [1] = 'a', [3] = 'c' }
      _doc.map = { b = 1, a = 2 }
      _doc.none = {}
      _doc.made = array()
    `);
    expect(out).toEqual({ list: ['x', 'y', 'z'], backwards: ['a', 'b', 'c'], sparse: { 1: 'a', 3: 'c' }, map: { a: 2, b: 1 }, none: {}, made: [] });
    expect(Object.keys(out.map as object)).toEqual(['a', 'b']);
  });

  it('keeps an empty array an array and an empty object an object', () => {
    expect(run('', { doc: { a: [], o: {} } })).toEqual({ a: [], o: {} });
  });

  it('maps JSON null to the null global, and nil removes a field', () => {
    const out = run('_doc.was_null = _doc.nothing == null; _doc.gone = nil; _doc.count = nil; _doc.set = null; _doc.str = tostring(null)', {
      doc: { nothing: null, count: 1, gone: 'x' },
    });
    expect(out).toEqual({ nothing: null, was_null: true, set: null, str: 'null' });
  });

  it('puts new fields after the known ones, sorted', () => {
    const out = run('_doc.zeta = 1; _doc.alpha = 2; _doc.a = nil', { doc: { c: 1, a: 2, b: 3 } });
    expect(Object.keys(out)).toEqual(['c', 'b', 'alpha', 'zeta']);
  });

  it('passes parameters as variables, of any JSON type', () => {
    const out = run('_doc.sum = inc + #names; _doc.who = names[2]; _doc.flag = opts.on', { params: { inc: 2, names: ['a', 'b'], opts: { on: true } } });
    expect(out).toEqual({ sum: 4, who: 'b', flag: true });
  });

  it('sees _old_doc ({} when there is none) and _method', () => {
    expect(run('_doc.prev = _old_doc.n; _doc.m = _method', { doc: { n: 2 }, oldDoc: { n: 1 }, method: 'UPDATE' })).toEqual({ n: 2, prev: 1, m: 'UPDATE' });
    expect(run('_doc.empty = next(_old_doc) == nil')).toEqual({ empty: true });
  });

  it('replaces _doc with a returned table', () => {
    expect(run('return { replaced = true }', { doc: { a: 1 } })).toEqual({ replaced: true });
  });

  it('keeps a __proto__ field an ordinary field', () => {
    const out = run('_doc["__proto__"] = { polluted = true }');
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses results with no document form, naming the field', () => {
    expect(failure('_doc.f = function() end').message).toContain('_doc.f: a function cannot be stored');
    expect(failure('_doc.x = { [true] = 1 }').message).toContain('keys are strings or integers');
    expect(failure('_doc.n = 0/0').message).toContain('_doc.n');
    expect(failure('_doc.me = _doc').message).toContain('nesting deeper than 128 levels');
    expect(failure('return 5').message).toContain('returned a number');
    expect(failure('_doc = nil').message).toContain('_doc must be a table');
    expect(failure('return { 1, 2 }').message).toContain('must be an object');
  });
});

describe('legacy forms', () => {
  it('runs compound assignments, append/erase with . and :, and _doc.erase', () => {
    const out = run(`
      _doc.n += 5;
      _doc.tags.append("c")
      _doc.tags:append("d")
      _doc.tags.erase("a")
      _doc.erase("drop")
      _doc["set"] = 1
      append(_doc.more, 3)
      erase(_doc.more, 1)
    `, { doc: { n: 1, tags: ['a', 'b', 'a'], drop: true, more: [1, 2, 1] } });
    expect(out).toEqual({ n: 6, tags: ['b', 'c', 'd'], more: [2, 3], set: 1 });
  });

  it('counts a missing field as 0 in arithmetic', () => {
    expect(run('_doc.serial = _old_doc.serial + 1; _doc.neg = -_doc.nope; _doc.m = _doc.nope * 3')).toEqual({ serial: 1, neg: 0, m: 0 });
  });
});

describe('errors', () => {
  it('reports a syntax error with its line (400)', () => {
    const err = failure('local a = 1\nlocal b = = 2', { name: 'broken' });
    expect(err.status).toBe(400);
    expect(err.code).toBe('script_syntax_error');
    expect(err.details).toEqual({ script: { name: 'broken', line: 2 } });
    expect(err.message).toMatch(/^Script 'broken', line 2: .*'='/);
  });

  it('reports a runtime error with the Lua message and the script line', () => {
    const err = failure('local t = nil\n\nreturn t.x');
    expect(err.code).toBe('script_error');
    expect(err.details).toEqual({ script: { line: 3 } });
    expect(err.message).toContain("attempt to index a nil value (local 't')");
  });

  it('names the line of an error raised inside a library function', () => {
    const err = failure('\n\nstring.rep()');
    expect(err.details).toEqual({ script: { line: 3 } });
    expect(err.message).toContain("bad argument #1 to 'rep'");
  });

  it('reports error() with a message or a table', () => {
    expect(failure('error("custom failure")').message).toContain('custom failure');
    expect(failure('error({})').message).toContain('error object is a table');
  });

  it('refuses binary chunks', () => {
    expect(failure('\x1bLua').code).toBe('script_syntax_error');
  });
});

describe('sandbox', () => {
  it.each([
    ['os.execute', "os.execute('true')"],
    ['io.open', "io.open('/etc/passwd')"],
    ['require', "require('os')"],
    ['load', "load('return 1')()"],
    ['loadstring', "loadstring('return 1')()"],
    ['dofile', "dofile('/etc/passwd')"],
    ['loadfile', "loadfile('/etc/passwd')"],
    ['debug', 'debug.sethook()'],
    ['package', "package.loadlib('x', 'y')"],
    ['collectgarbage', "collectgarbage('stop')"],
    ['print', "print('noise')"],
    ['coroutine', 'coroutine.create(print)'],
    ['string.dump', 'string.dump(function() end)'],
    ['os.getenv', "os.getenv('HOME')"],
  ])('%s is not available', (_name, body) => {
    const err = failure(body);
    expect(err.status).toBe(400);
    expect(err.code).toBe('script_error');
  });

  it('offers os.time and os.clock', () => {
    const out = run('_doc.t = os.time(); _doc.c = os.clock()');
    expect(typeof out.t).toBe('number');
    expect(typeof out.c).toBe('number');
  });

  it('keeps libraries and shared metatables read-only', () => {
    expect(failure('string.upper = nil').message).toContain('string is read-only');
    expect(failure("rawset(table, 'insert', nil)").message).toContain('read-only');
    expect(failure("getmetatable('').__index.upper = nil").code).toBe('script_error');
    expect(failure('setmetatable(_doc, {})', { doc: { a: 1 } }).message).toContain('protected metatable');
    expect(failure('setmetatable({}, { __gc = function() end })').message).toContain('__gc');
    expect(run("_doc.up = ('x'):upper(); _doc.t = getmetatable(_doc)", { doc: {} })).toEqual({ up: 'X', t: 'object' });
  });

  it('leaves nothing from one run to the next', () => {
    run('leaked = 42; string_cache = {}');
    expect(run('_doc.leaked = leaked; _doc.cache = string_cache; _doc.G = _G.leaked')).toEqual({});
    expect(run('_doc.p = p', { params: { p: 1 } })).toEqual({ p: 1 });
    expect(run('_doc.p = p')).toEqual({});
  });
});

describe('budgets', () => {
  // "Within the limit + 100 ms": the time budget here is 500 ms.
  // The budgets are 500 ms and 10^7 instructions: 600 ms on an idle machine; on a loaded one a budget check runs late by
  // the time other processes take the core (a timed assertion would fail there, not the bound it is about).
  const deadlineMs = 2_000;

  function expectStoppedInTime(body: string, message: RegExp, withinMs: number): void {
    const started = performance.now();
    const err = failure(body);
    const elapsed = performance.now() - started;
    expect(err.status).toBe(400);
    expect(err.code).toBe('script_limit_exceeded');
    expect(err.message).toMatch(message);
    expect(elapsed).toBeLessThan(withinMs);
    expect(run('_doc.ok = true')).toEqual({ ok: true });
  }

  it.each([
    ['an infinite loop', 'while true do end', /instruction limit exceeded|time limit exceeded/],
    ['a loop that catches the budget error', 'while true do pcall(function() while true do end end) end', /limit exceeded/],
    ['a memory bomb', "local s = string.rep('x', 4e6) s = s .. s .. s .. s .. s .. s .. s .. s .. s .. s .. s .. s .. s .. s .. s .. s .. s", /memory limit exceeded/],
    // Each doubling copies the whole string: on a loaded machine the time budget can run out before the memory one.
    ['a doubling string', "local s = 'x' while true do s = s .. s end", /memory limit exceeded|time limit exceeded/],
    ['deep recursion', 'local function f(n) return 1 + f(n + 1) end return f(1)', /call depth limit exceeded/],
    ['recursion through metamethods', 'local t = setmetatable({}, { __index = function(t, k) return t[k] end }) return t.x', /stack overflow/],
    ['big string churn', "local s = string.rep('x', 1e7) for i = 1, 1e6 do local t = s .. i end", /limit exceeded/],
    ['a huge sort', 'local t = {} for i = 1, 2e6 do t[i] = -i end table.sort(t)', /limit exceeded/],
    ['front inserts', 'local t = {} for i = 1, 1e6 do table.insert(t, 1, i) end', /limit exceeded/],
  ])('%s → 400 in time, and the runner still works', (_name, body, message) => {
    expectStoppedInTime(body, message, deadlineMs);
  });

  // C work the count hook does not see: one library call's work is bounded (strings, pattern steps) and the
  // clock is read before big calls. Without those bounds each of these ran for seconds past the budget.
  it.each([
    ['a gsub over a 12 MB string with a callback', "local s = string.rep('a', 4e6) s = s .. s .. s _doc.n = select(2, s:gsub('.', function(c) return c end))",
      /string length limit exceeded \(4194304 bytes\) in string.gsub/],
    ['a plain search that compares the whole needle at each position', "local s = string.rep('a', 4e6) _doc.x = s:find(string.rep('a', 3000) .. 'b', 1, true)",
      /time limit exceeded/],
    ['a long literal pattern on a long subject', "local s = string.rep('a', 4e6) _doc.x = s:match(string.rep('a', 40) .. '%d')", /limit exceeded/],
    ['gsub with replacements in C on a long subject', "local s = string.rep('a', 4e6) while true do s:gsub('.', '%0%0') end", /limit exceeded/],
    ['repeated string.rep of one byte', "while true do local s = string.rep('a', 4e6) end", /limit exceeded/],
    ['repeated upper of a long string', "local s = string.rep('a', 4e6) while true do local u = s:upper() end", /time limit exceeded|instruction limit exceeded/],
    ['a string.rep past the string limit', "_doc.s = string.rep('x', 2e8)", /string length limit exceeded \(4194304 bytes\) in string.rep/],
    ['a format past the string limit', "local s = string.rep('x', 3e6) _doc.s = string.format('%s%s', s, s)", /string length limit exceeded \(4194304 bytes\) in string.format/],
  ])('%s → 400 within the budget + 1 s, and the runner still works', (_name, body, message) => {
    expectStoppedInTime(body, message, runner.settings.timeMsMax + 1000);
  });

  it('answers calls past one C call\'s bound as C does', async () => {
    // Results, not time: a budget no loaded machine runs out of.
    const roomy = await ScriptRunner.create({ timeMsMax: 60_000 });
    const run = (body: string) => roomy.run({ body, doc: {}, method: 'PUT' });
    try {
      // A plain search over 1.5 MB runs as several C calls; a gsub over 120 KB with captures to expand as a plain search per
      // occurrence (in C without: 210 KB); a long rep as blocks.
      expect(run("local s = string.rep('x', 1.5e6) .. 'needle' .. string.rep('y', 10) _doc.at = { s:find('needle', 1, true) } _doc.again = { s:find('needle', -16) }"))
        .toEqual({ at: [1_500_001, 1_500_006], again: [1_500_001, 1_500_006] });
      expect(run("local s = string.rep('ab ', 70000) _doc.n = select(2, s:gsub(' ', '_')) _doc.two = select(2, s:gsub(' ', '%0%%', 2)) _doc.none = string.rep('x', 1.5e6):find('y', 1, true) == nil"))
        .toEqual({ n: 70_000, two: 2, none: true });
      expect(run("local s, n = string.rep('ab ', 40000):gsub(' ', '[%0]') _doc.s = s:sub(1, 12) .. s:sub(-6) .. #s .. '/' .. n _doc.e = select(2, pcall(string.gsub, string.rep('a', 2e5), 'a', '%2')):match('invalid.*')"))
        .toEqual({ s: 'ab[ ]ab[ ]ab]ab[ ]200000/40000', e: 'invalid capture index %2' });
      expect(run("_doc.a = string.rep('ab', 1000, ',') == ('ab,'):rep(999) .. 'ab' _doc.b = #string.rep('xyz', 4e5) _doc.c = string.rep('a', 70) == ('a'):rep(35) .. ('a'):rep(35) _doc.d = string.rep('ab', 65, '-')"))
        .toEqual({ a: true, b: 1_200_000, c: true, d: Array(65).fill('ab').join('-') });
    } finally {
      await roomy.close();
    }
  });

  it('bounds strings per library call with a configurable limit', async () => {
    const small = await ScriptRunner.create({ stringBytesMax: 1000 });
    try {
      expect(small.run({ body: "_doc.s = #string.rep('x', 1000) _doc.u = string.rep('y', 10):upper()", doc: {}, method: 'PUT' })).toEqual({ s: 1000, u: 'YYYYYYYYYY' });
      expect(() => small.run({ body: "_doc.s = #string.rep('x', 1001)", doc: {}, method: 'PUT' })).toThrow(/string length limit exceeded \(1000 bytes\) in string.rep/);
      expect(() => small.run({ body: "local s = string.rep('x', 600) _doc.s = (s .. s):upper()", doc: {}, method: 'PUT' })).toThrow(/string length limit exceeded \(1000 bytes\) in string.upper/);
      // Patterns: 1/64 of it.
      expect(() => small.run({ body: "_doc.s = string.find('x', string.rep('x.', 8))", doc: {}, method: 'PUT' })).toThrow(/in string.find/);
      // A script's pcall does not catch it: the run fails.
      expect(() => small.run({ body: "pcall(string.rep, 'x', 2000) _doc.ok = true", doc: {}, method: 'PUT' })).toThrow(/string length limit exceeded/);
    } finally {
      await small.close();
    }
  });

  it('bounds instructions with a configurable limit', async () => {
    const small = await ScriptRunner.create({ instructionsMax: 10_000 });
    try {
      expect(small.run({ body: 'for i = 1, 100 do _doc.n = i end', doc: {}, method: 'PUT' })).toEqual({ n: 100 });
      expect(() => small.run({ body: 'for i = 1, 100000 do _doc.n = i end', doc: {}, method: 'PUT' })).toThrow(/instruction limit exceeded \(10000 instructions\)/);
    } finally {
      await small.close();
    }
  });

  it('bounds memory with a configurable limit', async () => {
    const small = await ScriptRunner.create({ memoryBytesMax: 1024 * 1024 });
    try {
      expect(small.run({ body: "_doc.s = #string.rep('x', 1000)", doc: {}, method: 'PUT' })).toEqual({ s: 1000 });
      expect(() => small.run({ body: "_doc.s = #string.rep('x', 2000000)", doc: {}, method: 'PUT' })).toThrow(/memory limit exceeded/);
      expect(small.run({ body: '_doc.ok = true', doc: {}, method: 'PUT' })).toEqual({ ok: true });
    } finally {
      await small.close();
    }
  });
});

describe('compiled-chunk cache', () => {
  it('compiles a body once whatever its parameters; a changed body compiles again', async () => {
    const own = await ScriptRunner.create();
    try {
      const body = '_doc.n = (_doc.n or 0) + inc';
      for (let inc = 1; inc <= 5; inc++) expect(own.run({ body, params: { inc }, doc: { n: 1 }, method: 'PUT' })).toEqual({ n: 1 + inc });
      expect(own.stats()).toMatchObject({ compiles: 1, cacheMisses: 1, cacheHits: 4, cacheEntries: 1, runs: 5, failures: 0 });
      own.run({ body: `${body} * 2`, params: { inc: 1 }, doc: {}, method: 'PUT' });
      expect(own.stats()).toMatchObject({ compiles: 2, cacheMisses: 2, cacheEntries: 2 });
    } finally {
      await own.close();
    }
  });

  it('evicts beyond its size and recompiles after its time to live', async () => {
    const own = await ScriptRunner.create({ cacheEntriesMax: 2, cacheTtlMs: 50 });
    try {
      for (const body of ['_doc.a = 1', '_doc.b = 1', '_doc.c = 1', '_doc.a = 1']) own.run({ body, doc: {}, method: 'PUT' });
      expect(own.stats()).toMatchObject({ compiles: 4, cacheEvictions: 2, cacheEntries: 2 });
      await new Promise((resolve) => setTimeout(resolve, 80));
      own.run({ body: '_doc.a = 1', doc: {}, method: 'PUT' });
      expect(own.stats()).toMatchObject({ compiles: 5, cacheExpirations: 1 });
    } finally {
      await own.close();
    }
  });

  it('does not cache a body that does not compile', () => {
    const before = runner.stats();
    failure('this is not lua');
    failure('this is not lua');
    const after = runner.stats();
    expect(after.compiles - before.compiles).toBe(0);
    expect(after.cacheMisses - before.cacheMisses).toBe(2);
    expect(after.failures - before.failures).toBe(2);
  });
});

describe('options', () => {
  it('refuses nonsense limits', async () => {
    await expect(ScriptRunner.create({ instructionsMax: 0 })).rejects.toThrow(RangeError);
    await expect(ScriptRunner.create({ cacheTtlMs: -1 })).rejects.toThrow(RangeError);
    await expect(ScriptRunner.create({ stringBytesMax: 0 })).rejects.toThrow(RangeError);
  });
});
