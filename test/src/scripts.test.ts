/**
 * Lua scripts in writes (API.md §11) end to end: every accepted form of
 * `_script`, the variables a script sees, named and foreign scripts, the
 * index default, the legacy (ChaiScript) forms, counters under concurrent
 * writes, fields a script adds to the schema, the sandbox and the budgets
 * (each abuse answers 4xx within the budget and leaves the document as it
 * was), the cache counters in /:metrics, named scripts across a restart, and
 * the examples of docs/scripting.md.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVER_KINDS, startServers, type ServerKind } from './cluster-harness.js';
import { call, REPO_ROOT, removeDir, startServer, tempDataDir, type Server } from './harness.js';

/** The time budget of a script run (scriptTimeoutMs default) and the slack API.md allows past it. */
const SCRIPT_TIME_MS = 1000;
const SLACK_MS = 100;

async function metric(server: Server, name: string): Promise<number> {
  const r = await call(server, 'GET', '/:metrics');
  const line = r.text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}

describe.each(SERVER_KINDS)('%s', (kind: ServerKind) => {
  let server: Server;

  beforeAll(async () => {
    server = await startServers(kind);
  }, 60_000);

  afterAll(async () => {
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });

  describe('forms of _script', () => {
    it.each([
      ['a body string', '_doc.n = _doc.n * 2'],
      ['{_type: script, _lua: {_body}}', { _type: 'script', _lua: { _body: '_doc.n = _doc.n * 2' } }],
      ['_lua with _params', { _type: 'script', _lua: { _body: '_doc.n = _doc.n * factor', _params: { factor: 2 } } }],
      ['legacy _chai', { _type: 'script', _chai: { _body: '_doc.n = _doc.n * factor', _params: { factor: 2 } } }],
      ['legacy _value holding a body', { _value: '_doc.n = _doc.n * 2' }],
      ['legacy _value holding an object', { _value: { _body: '_doc.n = _doc.n * factor', _params: { factor: 2 } } }],
      ['legacy _body and _params directly', { _body: '_doc.n = _doc.n * factor', _params: { factor: 2 } }],
      ['_params beside _lua', { _type: 'script', _lua: { _body: '_doc.n = _doc.n * factor' }, _params: { factor: 2 } }],
    ])('%s', async (_form, script) => {
      const r = await call(server, 'PUT', `/forms/${encodeURIComponent(_form)}`, { n: 21, _script: script });
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ n: 42, _version: 1 });
      expect((await call(server, 'GET', `/forms/${encodeURIComponent(_form)}`)).json).toMatchObject({ n: 42 });
    });

    it('remembers a named script; later writes call it by name, in the long or the short form', async () => {
      const define = await call(server, 'PUT', '/named/1', {
        n: 1, _script: { _type: 'script', _lua: { _name: 'bump', _body: '_doc.n = _doc.n + (by or 1)' } },
      });
      expect(define.json).toMatchObject({ n: 2 });
      expect((await call(server, 'UPDATE', '/named/1', { _script: { _name: 'bump', _params: { by: 10 } } })).json).toMatchObject({ n: 12 });
      expect((await call(server, 'UPDATE', '/named/1', { _script: 'bump' })).json).toMatchObject({ n: 13, _version: 3 });
      // A new body under the name replaces it.
      await call(server, 'PUT', '/named/2', { n: 0, _script: { _lua: { _name: 'bump', _body: '_doc.n = _doc.n + 100' } } });
      expect((await call(server, 'UPDATE', '/named/1', { _script: 'bump' })).json).toMatchObject({ n: 113 });
    });

    it('an unknown name is a 400 and writes nothing', async () => {
      await call(server, 'PUT', '/named/3', { n: 1 });
      for (const script of [{ _name: 'nobody' }, 'nobody']) {
        const r = await call(server, 'UPDATE', '/named/3', { n: 2, _script: script });
        expect(r.status).toBe(400);
        expect(r.json.message).toContain("no script is named 'nobody'");
      }
      expect((await call(server, 'GET', '/named/3')).json).toMatchObject({ n: 1, _version: 1 });
    });

    it('runs a foreign script stored with _recurse: false, call-site _params overriding the stored ones', async () => {
      const stored = await call(server, 'PUT', '/library/pricing', {
        _recurse: false, script: { _lua: { _body: '_doc.total = _doc.price * qty * (1 - discount)', _params: { qty: 1, discount: 0 } } },
      });
      expect(stored.status).toBe(200);
      const plain = await call(server, 'PUT', '/orders/1', { price: 10, _script: { _type: 'foreign/object', _foreign: '/library/pricing' } });
      expect(plain.json).toMatchObject({ price: 10, total: 10 });
      const overridden = await call(server, 'PUT', '/orders/2', {
        price: 10, _script: { _type: 'foreign/object', _foreign: 'library/pricing.script', _params: { qty: 3 } },
      });
      expect(overridden.json).toMatchObject({ total: 30 });
      const both = await call(server, 'PUT', '/orders/3', {
        price: 10, _script: { _type: 'foreign/object', _foreign: '/library/pricing', _params: { qty: 2, discount: 0.5 } },
      });
      expect(both.json).toMatchObject({ total: 10 });
      const missing = await call(server, 'PUT', '/orders/4', { price: 1, _script: { _type: 'foreign/object', _foreign: '/library/none' } });
      expect(missing.status).toBe(400);
      expect((await call(server, 'GET', '/orders/4')).status).toBe(404);
    });

    it('runs the index default _schema._script on writes without their own; _script: null runs nothing', async () => {
      const created = await call(server, 'PUT', '/defaults/', { _schema: { _script: '_doc.touched = (_doc.touched or 0) + 1' } });
      expect(created.status).toBe(200);
      expect((await call(server, 'PUT', '/defaults/1', { a: 1 })).json).toMatchObject({ a: 1, touched: 1 });
      expect((await call(server, 'UPDATE', '/defaults/1', { a: 2 })).json).toMatchObject({ a: 2, touched: 2 });
      expect((await call(server, 'PATCH', '/defaults/1', [{ op: 'replace', path: '/a', value: 3 }])).json).toMatchObject({ a: 3, touched: 3 });
      expect((await call(server, 'UPDATE', '/defaults/1', { _script: '_doc.own = true' })).json).toMatchObject({ touched: 3, own: true });
      expect((await call(server, 'UPDATE', '/defaults/1', { a: 4, _script: null })).json).toMatchObject({ a: 4, touched: 3 });
    });

    it('refuses a malformed script object with a 400', async () => {
      for (const script of [42, {}, { _type: 'mystery' }, { _lua: { _body: 7 } }, { _lua: {}, _chai: {} }, { _foreign: 'nope' }]) {
        const r = await call(server, 'PUT', '/forms/bad', { a: 1, _script: script });
        expect(r.status).toBe(400);
      }
      expect((await call(server, 'GET', '/forms/bad')).status).toBe(404);
    });
  });

  describe('what a script sees', () => {
    it('_old_doc and _method on PUT, UPDATE and UPSERT', async () => {
      const body = '_doc.prev = _old_doc.n; _doc.method = _method';
      expect((await call(server, 'PUT', '/seen/1', { n: 1, _script: body })).json).toMatchObject({ n: 1, method: 'PUT' });
      expect((await call(server, 'GET', '/seen/1')).json.prev).toBeUndefined();
      expect((await call(server, 'UPDATE', '/seen/1', { n: 2, _script: body })).json).toMatchObject({ n: 2, prev: 1, method: 'UPDATE' });
      expect((await call(server, 'UPSERT', '/seen/2', { n: 5, _script: body })).json).toMatchObject({ n: 5, method: 'UPSERT' });
      expect((await call(server, 'POST', '/seen/', { n: 9, _script: body })).json).toMatchObject({ n: 9, method: 'POST' });
    });

    it('keeps types: integers, floats, nested objects and arrays, null', async () => {
      const doc = { i: 3, f: 1.5, nested: { list: [{ three: 3 }, { three: 4 }], words: ['one', 'two'], empty: [], none: null } };
      const r = await call(server, 'PUT', '/types/1', {
        ...doc, _script: '_doc.kinds = math.type(_doc.i) .. "/" .. math.type(_doc.f); _doc.third = _doc.nested.list[1].three + #_doc.nested.words - 2; _doc.is_null = _doc.nested.none == null',
      });
      expect(r.json).toMatchObject({ ...doc, kinds: 'integer/float', third: 3, is_null: true });
      expect((await call(server, 'GET', '/types/1')).json).toMatchObject({ ...doc, kinds: 'integer/float' });
    });

    it('_old_doc on DELETE: a failing script keeps the document, a passing one deletes it', async () => {
      await call(server, 'PUT', '/guarded/1', { locked: true });
      const guard = { _script: 'if _old_doc.locked then error("document is locked") end' };
      const refused = await call(server, 'DELETE', '/guarded/1', guard);
      expect(refused.status).toBe(400);
      expect(refused.json.message).toContain('document is locked');
      expect((await call(server, 'GET', '/guarded/1')).json).toMatchObject({ locked: true, _version: 1 });
      await call(server, 'UPDATE', '/guarded/1', { locked: false });
      expect((await call(server, 'DELETE', '/guarded/1', guard)).status).toBe(204);
      expect((await call(server, 'GET', '/guarded/1')).status).toBe(404);
    });
  });

  describe('legacy forms', () => {
    it.each([
      ['x += e', '_doc.n += 5;', { n: 6 }],
      ['-=, *=, /= in one line', '_doc.n -= 1; _doc.m *= 3; _doc.f /= 2;', { n: 0, m: 6, f: 2 }],
      ['list.append(v)', '_doc.tags.append("c")', { tags: ['a', 'b', 'a', 'c'] }],
      ['list.erase(v)', '_doc.tags.erase("a")', { tags: ['b'] }],
      ['_doc.erase(name)', '_doc.erase("m")', { m: undefined }],
      ['_doc["field"] = value', '_doc["set"] = _doc["n"] + 1', { set: 2 }],
      ['arithmetic on a missing field', '_doc.serial = _old_doc.serial + 1', { serial: 1 }],
    ])('%s', async (_form, body, expected) => {
      const id = encodeURIComponent(_form).replace(/\./g, '%2E');
      const r = await call(server, 'PUT', `/legacy/${id}`, { n: 1, m: 2, f: 4, tags: ['a', 'b', 'a'], _script: body });
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject(Object.fromEntries(Object.entries(expected).filter(([, v]) => v !== undefined)));
      for (const [k, v] of Object.entries(expected)) if (v === undefined) expect(r.json[k]).toBeUndefined();
    });
  });

  describe('counters under concurrent writes', () => {
    it('concurrent UPDATEs of one document lose no increment', async () => {
      await call(server, 'PUT', '/counters/plain', { n: 0 });
      const writers = 40;
      const replies = await Promise.all(Array.from({ length: writers }, () =>
        call(server, 'UPDATE', '/counters/plain', { _script: { _name: 'increment', _body: '_doc.n = _doc.n + 1' } })));
      expect(replies.every((r) => r.status === 200)).toBe(true);
      expect((await call(server, 'GET', '/counters/plain')).json).toMatchObject({ n: writers, _version: writers + 1 });
    });

    it('optimistic concurrency: each writer retries on 409 until its increment lands', async () => {
      await call(server, 'PUT', '/counters/occ', { n: 0 });
      const writers = 12;
      await Promise.all(Array.from({ length: writers }, async () => {
        for (;;) {
          const current = await call(server, 'GET', '/counters/occ');
          const r = await call(server, 'UPDATE', `/counters/occ?version=${current.json._version}`, { _script: '_doc.n = _doc.n + 1' });
          if (r.status === 200) return;
          expect(r.status).toBe(409);
        }
      }));
      expect((await call(server, 'GET', '/counters/occ')).json).toMatchObject({ n: writers, _version: writers + 1 });
    });

    it('optimistic concurrency with parameters: the final count equals the successful writes', async () => {
      await call(server, 'PUT', '/counters/params', { n: 0 });
      const writers = 12;
      await Promise.all(Array.from({ length: writers }, async (_, w) => {
        for (;;) {
          const current = await call(server, 'GET', '/counters/params');
          const r = await call(server, 'UPDATE', '/counters/params', {
            _version: current.json._version, _script: { _lua: { _body: '_doc.n = _doc.n + step', _params: { step: w + 1 } } },
          });
          if (r.status === 200) return;
          expect(r.status).toBe(409);
        }
      }));
      const total = (writers * (writers + 1)) / 2;
      expect((await call(server, 'GET', '/counters/params')).json).toMatchObject({ n: total, _version: writers + 1 });
    });
  });

  describe('the schema', () => {
    it('learns a field a script adds, and enforces its type afterwards', async () => {
      const r = await call(server, 'PUT', '/learned/1', { a: 1, _script: '_doc.score = _doc.a * 10' });
      expect(r.json).toMatchObject({ a: 1, score: 10 });
      const schema = (await call(server, 'GET', '/learned/')).json._schema;
      expect(schema.score._type).toBe('integer');
      const clash = await call(server, 'PUT', '/learned/2', { a: 1, score: 'high' });
      expect(clash.status).toBe(400);
      const scripted = await call(server, 'PUT', '/learned/3', { a: 1, _script: '_doc.score = "high"' });
      expect(scripted.status).toBe(400);
      expect((await call(server, 'GET', '/learned/3')).status).toBe(404);
      expect((await call(server, 'SEARCH', '/learned/', { _query: { score: 10 } })).json.total).toBe(1);
    });

    it('learns nested fields and arrays a script builds', async () => {
      const r = await call(server, 'PUT', '/learned/4', { _script: '_doc.meta = { words = { "a", "b" }, size = 2, ratio = 0.5 }' });
      expect(r.json).toMatchObject({ meta: { words: ['a', 'b'], size: 2, ratio: 0.5 } });
      const schema = (await call(server, 'GET', '/learned/')).json._schema;
      expect(schema.meta.size._type).toBe('integer');
      expect(schema.meta.ratio._type).toBe('floating');
    });
  });

  describe('abuse: 4xx within the budget, the document unchanged', () => {
    beforeAll(async () => {
      await call(server, 'PUT', '/abuse/doc', { n: 1, title: 'kept' });
    });

    it.each([
      ['an infinite loop', 'while true do end', 'limit exceeded'],
      ['a memory bomb', "local s = string.rep('x', 4e6) _doc.big = s .. s .. s .. s .. s", 'memory limit exceeded'],
      ['a string past what one library call may build', "_doc.big = string.rep('x', 1e8)", 'string length limit exceeded'],
      ['deep recursion', 'local function f(n) return f(n + 1) + 1 end _doc.n = f(1)', 'call depth limit exceeded'],
      ['os.execute', "os.execute('touch /tmp/tessera-pwned')", "attempt to call a nil value (field 'execute')"],
      ['io.open', "_doc.passwd = io.open('/etc/passwd'):read('a')", "global 'io'"],
      ['require', "local os = require('os')", "global 'require'"],
      ['a runtime error', '_doc.n = {} + 1', 'attempt to perform arithmetic on a table value'],
      ['a syntax error', '_doc.n = = 2', "unexpected symbol near '='"],
    ])('%s', async (_abuse, body, message) => {
      const started = performance.now();
      const r = await call(server, 'UPDATE', '/abuse/doc', { n: 2, _script: body });
      expect(performance.now() - started).toBeLessThan(SCRIPT_TIME_MS + SLACK_MS);
      expect(r.status).toBe(400);
      expect(r.json.message).toContain(message);
      expect(r.json.script?.line === undefined || r.json.script.line === 1).toBe(true);
      expect((await call(server, 'GET', '/abuse/doc')).json).toEqual({ n: 1, title: 'kept', _id: 'doc', _version: 1, '#docid': expect.any(Number), '#shard': expect.any(Number) });
      // The server keeps serving, scripts included.
      expect((await call(server, 'PUT', '/abuse/other', { n: 1, _script: '_doc.n = _doc.n + 1' })).json).toMatchObject({ n: 2 });
    });

    it('names the script line of a runtime error', async () => {
      const r = await call(server, 'UPDATE', '/abuse/doc', { _script: { _lua: { _name: 'broken', _body: 'local a = 1\n\nlocal b = nil + {}' } } });
      expect(r.status).toBe(400);
      expect(r.json.script).toEqual({ name: 'broken', line: 3 });
      expect(r.json.message).toMatch(/^Bad Request: Script 'broken', line 3: /);
    });
  });

  describe('compiled-chunk cache', () => {
    it('compiles a body once, whatever its parameters (the metrics count the hits)', async () => {
      const body = `_doc.v = _doc.v + inc -- ${kind} cache probe`;
      await call(server, 'PUT', '/cached/1', { v: 0, _script: { _lua: { _body: body, _params: { inc: 1 } } } });
      const hits = await metric(server, 'tessera_script_cache_hits_total');
      const misses = await metric(server, 'tessera_script_cache_misses_total');
      for (let inc = 2; inc <= 6; inc++) {
        const r = await call(server, 'UPDATE', '/cached/1', { _script: { _lua: { _body: body, _params: { inc } } } });
        expect(r.status).toBe(200);
      }
      expect((await call(server, 'GET', '/cached/1')).json.v).toBe(1 + 2 + 3 + 4 + 5 + 6);
      expect(await metric(server, 'tessera_script_cache_misses_total')).toBe(misses);
      expect(await metric(server, 'tessera_script_cache_hits_total')).toBe(hits + 5);
      await call(server, 'UPDATE', '/cached/1', { _script: { _lua: { _body: `${body}\n`, _params: { inc: 1 } } } });
      expect(await metric(server, 'tessera_script_cache_misses_total')).toBe(misses + 1);
    });
  });
});

describe('named scripts across a restart', () => {
  it('a restarted server still calls a script by name', async () => {
    const dataDir = tempDataDir();
    let server = await startServer({ dataDir });
    try {
      const defined = await call(server, 'PUT', '/persist/1', { n: 1, _script: { _lua: { _name: 'triple', _body: '_doc.n = _doc.n * 3' } } });
      expect(defined.json).toMatchObject({ n: 3 });
      expect(await server.stop()).toBe(0);
      server = await startServer({ dataDir });
      const r = await call(server, 'UPDATE', '/persist/1', { _script: 'triple' });
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ n: 9, _version: 2 });
    } finally {
      await server.stop();
      removeDir(dataDir);
    }
  }, 60_000);
});

/** The `http` blocks of a page, paired: a request (`METHOD /path` + JSON body) and the response after it (`HTTP/1.1 status` + JSON). */
function examples(markdown: string): Array<{ method: string; path: string; body?: unknown; status: number; expected?: unknown }> {
  const blocks = [...markdown.matchAll(/```http\n([\s\S]*?)```/g)].map((m) => (m[1] as string).trim());
  const out = [];
  for (let i = 0; i < blocks.length; i += 2) {
    const [requestLine, ...requestBody] = (blocks[i] as string).split('\n');
    const [statusLine, ...responseBody] = (blocks[i + 1] ?? '').split('\n');
    const [method, path] = (requestLine as string).split(' ');
    const status = /^HTTP\/1\.1 (\d{3})$/.exec(statusLine ?? '');
    if (method === undefined || path === undefined || status === null) throw new Error(`unpaired example: ${blocks[i]}`);
    out.push({
      method, path, status: Number(status[1]),
      ...(requestBody.length > 0 ? { body: JSON.parse(requestBody.join('\n')) } : {}),
      ...(responseBody.length > 0 ? { expected: JSON.parse(responseBody.join('\n')) } : {}),
    });
  }
  return out;
}

describe('docs/scripting.md', () => {
  it('every example answers as the page shows, in order', async () => {
    const page = examples(readFileSync(join(REPO_ROOT, 'docs/scripting.md'), 'utf8'));
    expect(page.length).toBeGreaterThan(15);
    const server = await startServer();
    try {
      for (const example of page) {
        const r = await call(server, example.method, example.path, example.body);
        const seen = { request: `${example.method} ${example.path}`, status: r.status, body: r.json };
        expect(seen).toMatchObject({ status: example.status, ...(example.expected === undefined ? {} : { body: example.expected }) });
      }
    } finally {
      await server.stop();
      removeDir(server.dataDir);
    }
  }, 60_000);
});
