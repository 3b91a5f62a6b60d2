/** DUMP /idx/ (API.md §7.6) and `tessera dump`: formats, paging, and a dump → import → dump round trip on Debian records. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { decodeMulti } from '@msgpack/msgpack';
import { request } from 'undici';
import { runCli } from './cli-process.js';
import { call, REPO_ROOT, removeDir, startServer, tempDataDir, type Server } from './harness.js';

let server: Server;
let dir: string;

beforeAll(async () => {
  server = await startServer();
  dir = tempDataDir('tessera-dump-');
});

afterAll(async () => {
  await server.stop();
  removeDir(server.dataDir);
  removeDir(dir);
});

function debian(n: number): Array<Record<string, unknown>> {
  const text = gunzipSync(readFileSync(join(REPO_ROOT, '../shared/data/debian-packages.ndjson.gz'))).toString('utf8');
  return text.split('\n', n).map((line) => JSON.parse(line) as Record<string, unknown>);
}

function ndjson(text: string): Array<Record<string, unknown>> {
  return text.split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A dump item without what only the first one carries. */
function plain(item: Record<string, unknown>): Record<string, unknown> {
  const { _schema: _s, ...rest } = item;
  const id = rest._id as unknown;
  return { ...rest, _id: id !== null && typeof id === 'object' ? (id as { _value: unknown })._value : id };
}

it('tessera dump, then tessera import into a new index, then dump again: the same documents, IDs and schema', async () => {
  const source = debian(400);
  const restored = await call(server, 'RESTORE', '/deb-src/', source.map((d) => JSON.stringify(d)).join('\n'), { 'content-type': 'application/x-ndjson' });
  expect(restored.json.indexed).toBe(400);

  const first = join(dir, 'deb-src.ndjson');
  const dumped = await runCli(['dump', '--index', '/deb-src/', '--url', server.url, '-o', first]);
  expect(dumped.code).toBe(0);
  expect(dumped.stderr).toMatch(/^dumped 400 documents from \/deb-src\/ to .*deb-src\.ndjson/m);
  expect(readdirSync(dir).filter((f) => f.includes('.partial-'))).toEqual([]);
  const items = ndjson(readFileSync(first, 'utf8'));
  expect(items).toHaveLength(400);
  // The bodies are the records as given; every generated ID once.
  const byPackage = (a: Record<string, unknown>, b: Record<string, unknown>) => String(a.package).localeCompare(String(b.package)) || String(a.version).localeCompare(String(b.version));
  const bodies = items.map((item) => { const { _id: _i, ...body } = plain(item); return body; });
  expect([...bodies].sort(byPackage)).toEqual([...source].sort(byPackage));
  expect(new Set(items.map((item) => plain(item)._id)).size).toBe(400);
  expect(items[0]!._id).toMatchObject({ _type: 'uuid', _value: expect.any(String) });
  expect(items.slice(1).every((item) => typeof item._id === 'string' && item._schema === undefined)).toBe(true);

  const imported = await runCli(['import', first, '--index', '/deb-copy/', '--url', server.url]);
  expect(imported.code).toBe(0);
  expect(imported.stdout).toMatch(/imported 400 of 400 documents/);

  const second = join(dir, 'deb-copy.ndjson.gz');
  expect((await runCli(['dump', '--index', '/deb-copy/', '--url', server.url, '-o', second])).code).toBe(0);
  // Same IDs on the same shards in the same order: byte for byte the same dump.
  expect(gunzipSync(readFileSync(second)).toString('utf8')).toBe(readFileSync(first, 'utf8'));
  expect((await call(server, 'GET', '/deb-copy/._schema')).json).toEqual((await call(server, 'GET', '/deb-src/._schema')).json);
  const someId = plain(items[123]!)._id as string;
  // #docid numbers arrival order in a shard: the only difference.
  const [a, b] = await Promise.all([call(server, 'GET', `/deb-src/${someId}?comments=false`), call(server, 'GET', `/deb-copy/${someId}?comments=false`)]);
  expect(b.json).toEqual(a.json);
  expect(a.json).toMatchObject({ _id: someId, _version: 1 });
}, 120_000);

it('keeps ID and field types that detection would get wrong: keyword IDs that look like numbers, a float field first seen as an integer', async () => {
  await call(server, 'PUT', '/types-src/', { _schema: { price: { _type: 'floating' }, code: { _type: 'keyword' } } });
  await call(server, 'PUT', '/types-src/first', { _id: { _type: 'keyword', _value: 'first' }, price: 5, code: '001' });
  for (const [id, price] of [['10', 2], ['2', 2.5], ['x', 7]] as const) {
    expect((await call(server, 'PUT', `/types-src/${id}`, { price, code: `c${id}` })).status).toBe(200);
  }
  const dump = await call(server, 'DUMP', '/types-src/', undefined, { accept: 'application/x-ndjson' });
  const restore = await call(server, 'RESTORE', '/types-copy/', dump.text, { 'content-type': 'application/x-ndjson' });
  expect(restore.json).toMatchObject({ indexed: 4, total: 4 });
  const schema = (await call(server, 'GET', '/types-copy/._schema')).json;
  expect(schema._id._type).toBe('keyword');
  expect(schema.price._type).toBe('floating');
  expect(schema.code._type).toBe('keyword');
  expect((await call(server, 'GET', '/types-copy/10')).json).toMatchObject({ _id: '10', price: 2, _version: 1 });
  expect((await call(server, 'GET', '/types-copy/2')).json).toMatchObject({ _id: '2', price: 2.5 });
});

it('answers a JSON array by default, NDJSON or a MessagePack sequence by Accept, gzip by Accept-Encoding', async () => {
  const docs = Array.from({ length: 30 }, (_, i) => ({ _id: i, n: i, tags: ['a', String(i)] }));
  await call(server, 'RESTORE', '/fmt/', JSON.stringify(docs), { 'content-type': 'application/json' });
  const expected = docs.map((d) => ({ _id: d._id, n: d.n, tags: d.tags }));
  const sortById = (xs: Array<Record<string, unknown>>) => [...xs].sort((x, y) => (x._id as number) - (y._id as number));

  const json = await call(server, 'DUMP', '/fmt/');
  expect(json.status).toBe(200);
  expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(json.headers['transfer-encoding']).toBe('chunked');
  expect(sortById((json.json as Array<Record<string, unknown>>).map(plain))).toEqual(expected);

  const lines = await call(server, 'DUMP', '/fmt/', undefined, { accept: 'application/x-ndjson' });
  expect(lines.headers['content-type']).toBe('application/x-ndjson');
  expect(sortById(ndjson(lines.text).map(plain))).toEqual(expected);

  const packed = await request(`${server.url}/fmt/`, { method: 'DUMP' as 'GET', headers: { accept: 'application/x-msgpack' } });
  expect(packed.headers['content-type']).toBe('application/x-msgpack');
  const values = [...decodeMulti(Buffer.from(await packed.body.arrayBuffer()))] as Array<Record<string, unknown>>;
  expect(sortById(values.map(plain))).toEqual(expected);

  const zipped = await call(server, 'DUMP', '/fmt/', undefined, { accept: 'application/x-ndjson', 'accept-encoding': 'gzip' });
  expect(zipped.headers['content-encoding']).toBe('gzip');
  expect(gunzipSync(zipped.bytes).toString('utf8')).toBe(lines.text);

  const bare = await call(server, 'DUMP', '/fmt/?schema=false', undefined, { accept: 'application/x-ndjson' });
  expect(ndjson(bare.text).every((item) => typeof item._id === 'number' && item._schema === undefined)).toBe(true);

  const one = await call(server, 'DUMP', '/fmt/7');
  expect(one.json).toEqual({ _id: 7, n: 7, tags: ['a', '7'] });

  expect((await call(server, 'DUMP', '/fmt/', undefined, { accept: 'application/x-yaml' })).status).toBe(406);
  expect((await call(server, 'DUMP', '/no-such-index/')).status).toBe(404);
  // Asked for NDJSON only, an error is one NDJSON line, not a 406.
  const missing = await call(server, 'DUMP', '/no-such-index/', undefined, { accept: 'application/x-ndjson' });
  expect(missing.status).toBe(404);
  expect(missing.headers['content-type']).toBe('application/x-ndjson');
  expect(missing.text).toBe('{"status":404,"type":"Not Found","code":"index_not_found","message":"Not Found: Index not found: /no-such-index/"}\n');
  expect((await call(server, 'DUMP', '/fmt/999')).status).toBe(404);
});

it('pages through shards larger than a page: every document once, in ID order within a shard', async () => {
  const n = 2500;
  await call(server, 'PUT', '/paged/', { _settings: { number_of_shards: 1 } });
  const body = Array.from({ length: n }, (_, i) => JSON.stringify({ _id: n - i, text: `document ${n - i}` })).join('\n');
  expect((await call(server, 'RESTORE', '/paged/', body, { 'content-type': 'application/x-ndjson' })).json.indexed).toBe(n);
  await call(server, 'DELETE', '/paged/1000');
  const items = ndjson((await call(server, 'DUMP', '/paged/?schema=false', undefined, { accept: 'application/x-ndjson' })).text);
  expect(items.map((item) => item._id)).toEqual(Array.from({ length: n }, (_, i) => i + 1).filter((id) => id !== 1000));
});

it('tessera dump of a missing index fails with the server\'s message and writes no file', async () => {
  const out = join(dir, 'missing.ndjson');
  const r = await runCli(['dump', '--index', '/not-there/', '--url', server.url, '-o', out]);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('DUMP /not-there/ failed: Not Found: Index not found: /not-there/');
  expect(existsSync(out)).toBe(false);
});
