/**
 * The document API end to end, against a real `tessera serve` process and
 * against a coordinator with three `tessera node` processes (SERVER_KINDS).
 */
import { decode, encode } from '@msgpack/msgpack';
import { parse as parseYaml } from 'yaml';
import { SERVER_KINDS, startServers, type ServerKind } from './cluster-harness.js';
import { call, removeDir, tempDataDir, type Server } from './harness.js';

describe.each(SERVER_KINDS)('%s', (kind: ServerKind) => {
  let server: Server;

  beforeAll(async () => {
    server = await startServers(kind);
  }, 60_000);

  afterAll(async () => {
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });

  describe('index and get', () => {
    it('PUT creates version 1 and echoes the document with _id, _version, #docid, #shard', async () => {
      const r = await call(server, 'PUT', '/blog/1', { title: 'hi', likes: 0 });
      expect(r.status).toBe(200);
      expect(r.json).toEqual({ title: 'hi', likes: 0, _id: 1, _version: 1, '#docid': expect.any(Number), '#shard': expect.any(Number) });
      expect(r.json['#shard']).toBeGreaterThanOrEqual(1);
      expect(r.json['#shard']).toBeLessThanOrEqual(5);
      const g = await call(server, 'GET', '/blog/1');
      expect(g.status).toBe(200);
      expect(g.json).toMatchObject({ title: 'hi', likes: 0, _id: 1, _version: 1 });
      expect(g.headers['content-type']).toBe('application/json; charset=utf-8');
    });

    it('PUT again replaces the document and bumps the version; #docid is stable', async () => {
      const a = await call(server, 'PUT', '/replace/x', { a: 1, b: 2 });
      const b = await call(server, 'PUT', '/replace/x', { c: 3 });
      expect(b.json).toMatchObject({ c: 3, _id: 'x', _version: 2, '#docid': a.json['#docid'] });
      expect(b.json.a).toBeUndefined();
    });

    it('GET of a missing document or index is 404 with the error body', async () => {
      const r = await call(server, 'GET', '/blog/404');
      expect(r.status).toBe(404);
      expect(r.json).toEqual({ status: 404, type: 'Not Found', code: 'document_not_found', message: 'Not Found: Document not found' });
      expect((await call(server, 'GET', '/nowhere/1')).status).toBe(404);
      expect((await call(server, 'HEAD', '/blog/404')).status).toBe(404);
      const head = await call(server, 'HEAD', '/blog/1');
      expect(head.status).toBe(200);
      expect(head.text).toBe('');
    });

    it('POST generates numeric IDs after the largest used, with Location', async () => {
      await call(server, 'PUT', '/numbers/41', { n: 41 });
      const r = await call(server, 'POST', '/numbers/', { n: 42 });
      expect(r.status).toBe(200);
      expect(r.json._id).toBe(42);
      expect(r.headers.location).toBe('/numbers/42');
      const quiet = await call(server, 'POST', '/numbers/?echo=false', { n: 43 });
      expect(quiet.status).toBe(201);
      expect(quiet.headers.location).toBe('/numbers/43');
      expect(quiet.text).toBe('');
    });

    it('POST on a new index generates UUIDs; keyword indexes get 22-character IDs', async () => {
      const u = await call(server, 'POST', '/uuids/', { a: 1 });
      expect(u.json._id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      await call(server, 'PUT', '/keywords/first', { a: 1 });
      const k = await call(server, 'POST', '/keywords/', { a: 2 });
      expect(k.json._id).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect((await call(server, 'GET', `/keywords/${k.json._id}`)).json.a).toBe(2);
    });

    it('ID types: integer index refuses a non-integer ID; UUIDs are lower-cased', async () => {
      await call(server, 'PUT', '/ints/7', { a: 1 });
      const bad = await call(server, 'PUT', '/ints/seven', { a: 1 });
      expect(bad.status).toBe(400);
      const up = await call(server, 'PUT', '/uuidx/7E2A6F1C-0D3B-4C5A-9E8F-1A2B3C4D5E6F', { a: 1 });
      expect(up.json._id).toBe('7e2a6f1c-0d3b-4c5a-9e8f-1a2b3c4d5e6f');
      expect((await call(server, 'GET', '/uuidx/7e2a6f1c-0d3b-4c5a-9e8f-1a2b3c4d5e6f')).status).toBe(200);
      const declared = await call(server, 'PUT', '/declared/12', { _id: { _type: 'keyword' }, a: 1 });
      expect(declared.json._id).toBe('12');
    });

    it('index paths with several segments are separate indexes', async () => {
      await call(server, 'PUT', '/a/b/doc', { v: 'ab' });
      await call(server, 'PUT', '/a/doc', { v: 'a' });
      expect((await call(server, 'GET', '/a/b/doc')).json.v).toBe('ab');
      expect((await call(server, 'GET', '/a/doc')).json.v).toBe('a');
      expect((await call(server, 'GET', '/a/b/')).status).toBe(200);
    });

    it('stored form: option objects become their _value, comments dropped, dotted names nested', async () => {
      const r = await call(server, 'PUT', '/forms/1', {
        title: { _type: 'text', _value: 'Hello' },
        '#note': 'a comment',
        'user.name': 'Kronuz',
        user: { age: 3 },
        secret: { _store: false, _value: 'x' },
      });
      expect(r.status).toBe(200);
      const g = await call(server, 'GET', '/forms/1');
      expect(g.json).toMatchObject({ title: 'Hello', user: { name: 'Kronuz', age: 3 } });
      expect(g.json['#note']).toBeUndefined();
      expect(g.json.secret).toBeUndefined();
    });

    it('an unknown reserved key is a 400 and nothing is written', async () => {
      const r = await call(server, 'PUT', '/forms/2', { _bogus: 1, a: 1 });
      expect(r.status).toBe(400);
      expect((await call(server, 'GET', '/forms/2')).status).toBe(404);
    });

    it('selectors drill into documents and objects', async () => {
      await call(server, 'PUT', '/sel/1', { user: { name: 'A', city: 'Richmond' }, n: 1 });
      expect((await call(server, 'GET', '/sel/1.user.city')).json).toBe('Richmond');
      expect((await call(server, 'GET', '/sel/1?selector=n')).json).toBe(1);
      expect((await call(server, 'GET', '/sel/1?selector={n,user.name}')).json).toEqual({ n: 1, user: { name: 'A' } });
      expect((await call(server, 'GET', '/sel/1.user.nothing')).status).toBe(404);
    });
  });

  describe('schema', () => {
    it('types new fields from their first value and shows them in the index schema', async () => {
      await call(server, 'PUT', '/typed/1', { name: 'Kronuz', age: 40, ok: true, born: '1980-05-24', score: 1.5, tags: ['a'], user: { city: 'x' } });
      const schema = (await call(server, 'GET', '/typed/')).json._schema;
      expect(schema).toMatchObject({
        _type: 'object',
        _id: { _type: 'integer' },
        name: { _type: 'text' },
        age: { _type: 'integer', _accuracy: [100, 1000, 10000, 100000, 1000000, 100000000] },
        ok: { _type: 'boolean' },
        born: { _type: 'date' },
        score: { _type: 'floating' },
        tags: { _type: 'array/text' },
        user: { city: { _type: 'text' } },
      });
    });

    it('a value of the wrong type is a 400 and nothing is written', async () => {
      await call(server, 'PUT', '/typed/2', { age: 41 });
      const bad = await call(server, 'PUT', '/typed/3', { name: 'ok', age: 'forty' });
      expect(bad.status).toBe(400);
      expect(bad.json.message).toMatch(/integer/);
      expect((await call(server, 'GET', '/typed/3')).status).toBe(404);
      const badUpdate = await call(server, 'UPDATE', '/typed/2', { age: 'old', other: 1 });
      expect(badUpdate.status).toBe(400);
      expect((await call(server, 'GET', '/typed/2')).json).toEqual(expect.objectContaining({ age: 41, _version: 1 }));
      expect((await call(server, 'GET', '/typed/')).json._schema.other).toBeUndefined();
    });

    it('convertible values are converted; dates are stored in UTC ISO form', async () => {
      const r = await call(server, 'PUT', '/typed/4', { age: '42', born: '2015/01/01 12:10:30' });
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ born: '2015-01-01T12:10:30' });
    });

    it('concurrent writes adding different new fields both land in the schema; a conflicting type loses', async () => {
      const writes = await Promise.all([
        call(server, 'PUT', '/race-schema/1', { a: 1 }),
        call(server, 'PUT', '/race-schema/2', { b: 'x' }),
        call(server, 'PUT', '/race-schema/3', { c: true }),
      ]);
      expect(writes.map((w) => w.status)).toEqual([200, 200, 200]);
      const schema = (await call(server, 'GET', '/race-schema/')).json._schema;
      expect(schema).toMatchObject({ a: { _type: 'integer' }, b: { _type: 'text' }, c: { _type: 'boolean' } });
      const both = await Promise.all([call(server, 'PUT', '/race-schema/4', { d: { x: 1 } }), call(server, 'PUT', '/race-schema/5', { d: 5 })]);
      expect(both.map((w) => w.status).sort()).toEqual([200, 400]);
    });
  });

  describe('update, patch, delete', () => {
    it('UPDATE merges objects field by field and replaces scalars and arrays', async () => {
      // Four numbers: `[1, 2, 3]` would be detected as a geo point `[lon, lat, h]` (API.md §8.1).
      await call(server, 'PUT', '/merge/1', { a: { x: 1, y: 2 }, list: [1, 2, 3, 4], s: 'old', keep: true });
      const r = await call(server, 'UPDATE', '/merge/1', { a: { y: 20, z: 30 }, list: [9], s: null });
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ a: { x: 1, y: 20, z: 30 }, list: [9], s: null, keep: true, _version: 2 });
      expect((await call(server, 'GET', '/merge/1')).json).toMatchObject({ a: { x: 1, y: 20, z: 30 }, list: [9], s: null, keep: true });
    });

    it('UPDATE of a missing document is 404 without upsert and creates it with upsert', async () => {
      expect((await call(server, 'UPDATE', '/merge2/missing', { a: 1 })).status).toBe(404);
      expect((await call(server, 'GET', '/merge2/missing')).status).toBe(404);
      const r = await call(server, 'UPDATE', '/merge2/missing?upsert', { a: 1 });
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ a: 1, _version: 1 });
      const u = await call(server, 'UPSERT', '/merge2/other', { b: 2 });
      expect(u.json).toMatchObject({ b: 2, _version: 1 });
    });

    it('PATCH applies JSON Patch and incr; a failing patch changes nothing', async () => {
      await call(server, 'PUT', '/patch/1', { likes: 1, tags: ['a'] });
      const r = await call(server, 'PATCH', '/patch/1', [
        { op: 'add', path: '/tags/-', value: 'b' },
        { op: 'incr', path: '/likes', value: 2 },
      ]);
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ likes: 3, tags: ['a', 'b'], _version: 2 });
      const bad = await call(server, 'PATCH', '/patch/1', [
        { op: 'replace', path: '/likes', value: 100 },
        { op: 'test', path: '/likes', value: 5 },
      ]);
      expect(bad.status).toBe(400);
      expect((await call(server, 'GET', '/patch/1')).json).toMatchObject({ likes: 3, _version: 2 });
    });

    it('DELETE removes the document (204), then 404; re-creating starts at version 1', async () => {
      await call(server, 'PUT', '/del/1', { a: 1 });
      await call(server, 'PUT', '/del/1', { a: 2 });
      const d = await call(server, 'DELETE', '/del/1');
      expect(d.status).toBe(204);
      expect((await call(server, 'GET', '/del/1')).status).toBe(404);
      expect((await call(server, 'DELETE', '/del/1')).status).toBe(404);
      expect((await call(server, 'PUT', '/del/1', { a: 3 })).json._version).toBe(1);
    });
  });

  describe('versions', () => {
    it('?version and body _version must equal the current version, else 409 and nothing changes', async () => {
      await call(server, 'PUT', '/occ/1', { n: 1 });
      const conflict = await call(server, 'PUT', '/occ/1?version=5', { n: 2 });
      expect(conflict.status).toBe(409);
      expect(conflict.json).toEqual({ status: 409, type: 'Conflict', code: 'version_conflict', message: 'Conflict: Version mismatch!' });
      expect((await call(server, 'UPDATE', '/occ/1', { _version: 3, n: 2 })).status).toBe(409);
      expect((await call(server, 'GET', '/occ/1')).json).toMatchObject({ n: 1, _version: 1 });
      const ok = await call(server, 'PUT', '/occ/1?version=1', { n: 2, _version: 1 });
      expect(ok.status).toBe(200);
      expect(ok.json._version).toBe(2);
      expect(ok.json).not.toHaveProperty('n', 1);
      expect((await call(server, 'PUT', '/occ/1?version=1', { n: 3 })).status).toBe(409);
      expect((await call(server, 'DELETE', '/occ/1?version=1')).status).toBe(409);
      expect((await call(server, 'GET', '/occ/1')).json).toMatchObject({ n: 2, _version: 2 });
    });

    it('version 0 means "must not exist"', async () => {
      expect((await call(server, 'PUT', '/occnew/new?version=0', { a: 1 })).status).toBe(200);
      expect((await call(server, 'PUT', '/occnew/new?version=0', { a: 2 })).status).toBe(409);
      expect((await call(server, 'PUT', '/occnew/absent?version=3', { a: 2 })).status).toBe(409);
      expect((await call(server, 'GET', '/occnew/absent')).status).toBe(404);
    });

    it('two concurrent writers with the same _version: exactly one wins', async () => {
      for (let round = 0; round < 10; round++) {
        const id = `race${round}`;
        await call(server, 'PUT', `/race/${id}`, { writer: 'none' });
        const results = await Promise.all(['a', 'b', 'c', 'd'].map((w) => call(server, 'UPDATE', `/race/${id}`, { writer: w, _version: 1 })));
        const winners = results.filter((r) => r.status === 200);
        expect(winners).toHaveLength(1);
        expect(results.filter((r) => r.status === 409)).toHaveLength(3);
        const doc = (await call(server, 'GET', `/race/${id}`)).json;
        expect(doc._version).toBe(2);
        expect(doc.writer).toBe(winners[0]!.json.writer);
      }
    });

    it('a bad version parameter is a 400', async () => {
      expect((await call(server, 'PUT', '/occ/1?version=abc', { a: 1 })).status).toBe(400);
      expect((await call(server, 'PUT', '/occ/1', { a: 1, _version: 'x' })).status).toBe(400);
    });
  });

  describe('codecs', () => {
    it('accepts JSON with comments and trailing commas', async () => {
      const body = '{\n // a comment\n "a": 1, /* another */ "b": [1, 2,],\n}';
      const r = await call(server, 'PUT', '/codec/json5', body, { 'content-type': 'application/json' });
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ a: 1, b: [1, 2] });
    });

    it('accepts MessagePack and YAML bodies and answers in the format asked', async () => {
      const m = await call(server, 'PUT', '/codec/msg', Buffer.from(encode({ a: 1, 'x.y': 'z' })), {
        'content-type': 'application/x-msgpack',
      });
      expect(m.status).toBe(200);
      expect(m.headers['content-type']).toBe('application/x-msgpack');
      expect(decode(m.bytes)).toMatchObject({ a: 1, x: { y: 'z' }, _version: 1 });
      const y = await call(server, 'PUT', '/codec/yaml', 'a: 1\nlist:\n  - x\n  - y\n', { 'content-type': 'application/x-yaml' });
      expect(y.status).toBe(200);
      expect(parseYaml(y.text)).toMatchObject({ a: 1, list: ['x', 'y'] });
      const asYaml = await call(server, 'GET', '/codec/msg', undefined, { accept: 'application/x-yaml' });
      expect(asYaml.headers['content-type']).toMatch(/^application\/x-yaml/);
      expect(parseYaml(asYaml.text)).toMatchObject({ a: 1, x: { y: 'z' } });
      const asMsgpack = await call(server, 'GET', '/codec/yaml', undefined, { accept: 'application/msgpack' });
      expect(decode(asMsgpack.bytes)).toMatchObject({ a: 1, list: ['x', 'y'] });
    });

    it('?pretty indents; unacceptable Accept is a 406 with no body', async () => {
      const p = await call(server, 'GET', '/codec/json5?pretty');
      expect(p.text).toContain('\n  "a": 1');
      const n = await call(server, 'GET', '/codec/json5', undefined, { accept: 'text/html' });
      expect(n.status).toBe(406);
      expect(n.text).toBe('');
    });

    it('malformed bodies are 400 and nothing is written', async () => {
      for (const [type, body] of [
        ['application/json', '{"a": '],
        ['application/json', '{"a": NaN}'],
        ['application/x-msgpack', Buffer.from([0xdb, 0xff, 0xff, 0xff, 0xff, 0x61])],
        ['application/x-yaml', 'a: [1, 2'],
        ['application/json', '{"__proto__": {"polluted": true}}'],
        ['application/json', '['.repeat(100_000) + ']'.repeat(100_000)],
      ] as Array<[string, string | Buffer]>) {
        const r = await call(server, 'PUT', '/codec/bad', body, { 'content-type': type });
        expect(r.status).toBe(400);
        expect(r.json.status).toBe(400);
      }
      expect((await call(server, 'GET', '/codec/bad')).status).toBe(404);
    });

    it('a document body must be an object; opaque content types are 415 where no content can be stored', async () => {
      expect((await call(server, 'PUT', '/codec/arr', [1, 2])).status).toBe(400);
      // A PUT of one to a document stores it as content (content.test.ts); a POST to the index has no document to hold it.
      expect((await call(server, 'POST', '/codec/', Buffer.from([1, 2, 3]), { 'content-type': 'image/png' })).status).toBe(415);
      expect((await call(server, 'PATCH', '/codec/png', Buffer.from([1, 2, 3]), { 'content-type': 'image/png' })).status).toBe(415);
    });
  });

  describe('method override and mapping', () => {
    it('X-HTTP-Method-Override on POST sets the method; on GET it is a 400', async () => {
      await call(server, 'PUT', '/ovr/1', { a: 1 });
      const r = await call(server, 'POST', '/ovr/1', { b: 2 }, { 'x-http-method-override': 'UPDATE' });
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ a: 1, b: 2, _version: 2 });
      const bad = await call(server, 'GET', '/ovr/1', undefined, { 'x-http-method-override': 'DELETE' });
      expect(bad.status).toBe(400);
      expect(bad.json.message).toBe("Bad Request: 'x-http-method-override' header must use the POST method");
      const info = await call(server, 'POST', '/ovr/1', undefined, { 'HTTP-Method-Override': 'INFO' });
      expect(info.json).toMatchObject({ version: 2, data: [{ content_type: 'application/msgpack', type: 'inplace' }] });
    });

    it(':method mapping with GET or POST', async () => {
      const r = await call(server, 'POST', '/ovr/1:update', { c: 3 });
      expect(r.json).toMatchObject({ a: 1, b: 2, c: 3, _version: 3 });
      const info = await call(server, 'GET', '/ovr/1:info');
      expect(info.json.version).toBe(3);
      expect((await call(server, 'PUT', '/ovr/1:update', { c: 4 })).status).toBe(400);
    });
  });

  describe('indexes and cluster', () => {
    it('PUT /idx/ with _settings and _schema creates the index; GET shows them', async () => {
      const r = await call(server, 'PUT', '/schemas/', {
        _settings: { number_of_shards: 2, number_of_replicas: 0 },
        _schema: { name: { _type: 'text' } },
      });
      expect(r.status).toBe(200);
      expect(r.json._settings).toMatchObject({ number_of_shards: 2, number_of_replicas: 0 });
      // One copy per shard: on the embedded node, or on two of the cluster's nodes.
      expect(r.json._settings.shards).toEqual(kind === 'embedded' ? [['node1'], ['node1']] : [[expect.stringMatching(/^node[123]$/)], [expect.stringMatching(/^node[123]$/)]]);
      if (kind === 'cluster') expect(r.json._settings.shards[0][0]).not.toBe(r.json._settings.shards[1][0]);
      expect(r.json._schema).toMatchObject({ _type: 'object', name: { _type: 'text' } });
      const again = await call(server, 'PUT', '/schemas/', { _schema: { name: { _type: 'text' } } });
      expect(again.status).toBe(200);
      expect((await call(server, 'PUT', '/schemas/', { _settings: { number_of_shards: 3 } })).json.message)
        .toBe("Bad Request: It is not allowed to change 'number_of_shards' setting");
      expect((await call(server, 'PUT', '/schemas/', { _schema: { name: { _type: 'keyword' } } })).status).toBe(400);
      expect((await call(server, 'PUT', '/schemas/', { _settings: { shards: 1 } })).status).toBe(400);
      expect((await call(server, 'GET', '/schemas/._schema.name')).json).toMatchObject({ _type: 'text', _prefix: 'name.', _slot: 864931271 });
      expect((await call(server, 'HEAD', '/schemas/')).status).toBe(200);
      expect((await call(server, 'HEAD', '/nothing-here/')).status).toBe(404);
    });

    it('INFO /idx/ counts documents; COMMIT answers 200 with no body', async () => {
      await call(server, 'PUT', '/counted/1', { a: 1 });
      await call(server, 'PUT', '/counted/2', { a: 2 });
      const info = await call(server, 'INFO', '/counted/');
      expect(info.json).toMatchObject({ endpoint: 'counted', doc_count: 2, last_id: 2, doc_del: 0 });
      expect(info.json.shards).toHaveLength(5);
      const c = await call(server, 'COMMIT', '/counted/');
      expect(c.status).toBe(200);
      expect(c.text).toBe('');
    });

    it('DELETE /idx/ removes the index and its documents', async () => {
      await call(server, 'PUT', '/gone/1', { a: 1 });
      expect((await call(server, 'DELETE', '/gone/')).status).toBe(204);
      expect((await call(server, 'GET', '/gone/1')).status).toBe(404);
      expect((await call(server, 'GET', '/gone/')).status).toBe(404);
      expect((await call(server, 'DELETE', '/gone/')).status).toBe(404);
      expect((await call(server, 'PUT', '/gone/1', { a: 2 })).json._version).toBe(1);
    });

    it('index lists: GET answers per index; document APIs refuse lists', async () => {
      await call(server, 'PUT', '/l1/1', { a: 1 });
      await call(server, 'PUT', '/l2/1', { a: 1 });
      const r = await call(server, 'GET', '/l1,l2/');
      expect(Object.keys(r.json)).toEqual(['/l1/', '/l2/']);
      const d = await call(server, 'GET', '/l1,l2/1');
      expect(d.status).toBe(400);
      expect(d.json.message).toBe('Bad Request: Method can only be used with single indexes');
    });

    it('invalid index names and internal indexes are refused', async () => {
      expect((await call(server, 'PUT', '/bad%20name/1', { a: 1 })).status).toBe(400);
      expect((await call(server, 'PUT', `/${'x'.repeat(250)}/1`, { a: 1 })).status).toBe(400);
      expect((await call(server, 'PUT', '/.tessera/1', { a: 1 })).status).toBe(403);
    });

    it('GET / and /.nodes describe the cluster', async () => {
      const root = await call(server, 'GET', '/');
      expect(root.json).toMatchObject({ name: kind === 'embedded' ? 'node1' : 'coordinator', cluster_name: 'tessera', state: 'READY' });
      expect(root.json.server).toMatch(/^Tessera v\d+\.\d+\.\d+/);
      expect(root.json.versions['Node.js']).toBe(process.version);
      const nodes = await call(server, 'GET', '/.nodes');
      type Copy = { index: string; primary: boolean; in_sync: boolean };
      if (kind === 'embedded') {
        expect(nodes.json).toHaveLength(1);
        expect(nodes.json[0]).toMatchObject({ name: 'node1', active: true, local: true, role: 'coordinator+shard', http_port: server.port });
      } else {
        expect(nodes.json.map((n: { name: string }) => n.name)).toEqual(['coordinator', 'node1', 'node2', 'node3']);
        expect(nodes.json[0]).toMatchObject({ active: true, local: true, role: 'coordinator', http_port: server.port, shards: [] });
        for (const node of nodes.json.slice(1)) expect(node).toMatchObject({ active: true, local: false, role: 'shard' });
      }
      // Each of /blog/'s 5 shards has its primary on one node, in sync.
      const primaries = nodes.json.flatMap((n: { shards: Copy[] }) => n.shards.filter((c) => c.index === '/blog/' && c.primary));
      expect(primaries).toHaveLength(5);
      for (const copy of primaries) expect(copy.in_sync).toBe(true);
    });

    it('methods: OPTIONS lists them, OPEN is 501, unknown tokens are 405', async () => {
      const o = await call(server, 'OPTIONS', '/blog/1');
      expect(o.status).toBe(200);
      expect(o.headers.allow).toContain('UPDATE');
      expect((await call(server, 'OPEN', '/blog/')).status).toBe(501);
      expect((await call(server, 'FROBNICATE', '/blog/1')).status).toBe(405);
      expect((await call(server, 'POST', '/blog/1', { a: 1 })).status).toBe(405);
      expect((await call(server, 'PUT', '/', { a: 1 })).status).toBe(405);
    });
  });

  // Two more servers per run: against the cluster (4 processes each) this
  // doubled the suite's time; cluster.test.ts restarts nodes and the
  // coordinator and checks the same documents, versions and ID counters.
  (kind === 'embedded' ? describe : describe.skip)('persistence', () => {
    it('documents, versions, schemas and ID counters survive a restart', async () => {
      const dataDir = tempDataDir();
      const first = await startServers(kind, { dataDir });
      await call(first, 'PUT', '/persist/', { _settings: { number_of_shards: 3 } });
      for (let i = 1; i <= 20; i++) await call(first, 'PUT', `/persist/${i}`, { i });
      await call(first, 'UPDATE', '/persist/5', { extra: true });
      await call(first, 'DELETE', '/persist/6');
      expect(await first.stop()).toBe(0);
      const second = await startServers(kind, { dataDir });
      try {
        expect((await call(second, 'GET', '/persist/5')).json).toMatchObject({ i: 5, extra: true, _version: 2 });
        expect((await call(second, 'GET', '/persist/6')).status).toBe(404);
        expect((await call(second, 'GET', '/persist/20')).json._version).toBe(1);
        expect((await call(second, 'GET', '/persist/')).json._settings.number_of_shards).toBe(3);
        expect((await call(second, 'POST', '/persist/', { next: true })).json._id).toBe(21);
      } finally {
        await second.stop();
        removeDir(dataDir);
      }
    });
  });

  describe('observability', () => {
    it('GET /:metrics serves Prometheus text with request latencies, documents per index and process metrics', async () => {
      await call(server, 'PUT', '/metered/1', { a: 1 });
      const r = await call(server, 'GET', '/:metrics');
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(r.text).toMatch(/tessera_http_requests_seconds_count\{method="PUT",status="200"\} \d+/);
      expect(r.text).toMatch(/tessera_operations_seconds_count\{operation="document.put"\} \d+/);
      expect(r.text).toContain('tessera_documents{index="/metered/"} 1');
      expect(r.text).toMatch(/tessera_uptime_seconds \d/);
      expect(r.text).toMatch(/tessera_http_current_connections \d/);
      expect(r.text).toContain('nodejs_eventloop_lag_seconds');
      expect((await call(server, 'PUT', '/:metrics', { a: 1 })).status).toBe(405);
    });

    it('echoes X-Request-Id or generates one', async () => {
      const given = await call(server, 'GET', '/', undefined, { 'x-request-id': 'abc-123' });
      expect(given.headers['x-request-id']).toBe('abc-123');
      const made = await call(server, 'GET', '/blog/404');
      // A per-process random prefix and a counter: unique, and cheaper than a UUID per request.
      expect(made.headers['x-request-id']).toMatch(/^[0-9a-f]{16}-[0-9a-f]+$/);
      const next = await call(server, 'GET', '/blog/404');
      expect(next.headers['x-request-id']).not.toBe(made.headers['x-request-id']);
      await server.waitForLog((l) => l.msg === 'request' && l.requestId === 'abc-123' && l.status === 200);
    });

    it('/healthz and /readyz answer', async () => {
      expect((await call(server, 'GET', '/healthz')).json).toEqual({ status: 'ok' });
      const ready = await call(server, 'GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.json).toEqual({ status: 'ready' });
    });
  });
});
