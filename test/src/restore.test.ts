/** RESTORE /idx/ (API.md §7.7) against the real server, with the Debian corpus. */
import { encode } from '@msgpack/msgpack';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { call, REPO_ROOT, removeDir, startServer, type Server } from './harness.js';

let server: Server;

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server.stop();
  removeDir(server.dataDir);
});

function debian(n: number): Array<Record<string, unknown>> {
  const text = gunzipSync(readFileSync(join(REPO_ROOT, '../shared/data/debian-packages.ndjson.gz'))).toString('utf8');
  return text.split('\n', n).map((line) => JSON.parse(line) as Record<string, unknown>);
}

it('loads NDJSON items with their IDs, each answered in its place', async () => {
  const docs = debian(2000);
  const body = docs.map((d, i) => JSON.stringify({ _id: i, ...d })).join('\n');
  const r = await call(server, 'RESTORE', '/debian/', body, { 'content-type': 'application/x-ndjson' });
  expect(r.status).toBe(200);
  expect(r.json).toMatchObject({ prepared: 2000, processed: 2000, indexed: 2000, total: 2000 });
  expect(r.json.items).toHaveLength(2000);
  expect(r.json.items[7]).toEqual({ _id: 7, _version: 1, '#docid': expect.any(Number), '#shard': expect.any(Number) });
  expect(typeof r.json.took).toBe('string');
  expect((await call(server, 'GET', '/debian/1999')).json).toMatchObject({ package: docs[1999]!.package, _version: 1 });
  expect((await call(server, 'INFO', '/debian/')).json.doc_count).toBe(2000);
  // Rerunning is idempotent on IDs: versions move, nothing is duplicated.
  const again = await call(server, 'RESTORE', '/debian/', body, { 'content-type': 'application/x-ndjson' });
  expect(again.json.indexed).toBe(2000);
  expect((await call(server, 'INFO', '/debian/')).json.doc_count).toBe(2000);
  expect((await call(server, 'GET', '/debian/5')).json._version).toBe(2);
}, 60_000);

it('writes of one document in batches written at once apply in item order', async () => {
  // 700 IDs × 5 rounds: every 1,000-item batch rewrites documents of the batch before it (and some twice itself).
  const lines: string[] = [];
  for (let round = 0; round < 5; round++) for (let id = 0; id < 700; id++) lines.push(JSON.stringify({ _id: id, round, text: `round ${round}` }));
  const r = await call(server, 'RESTORE', '/rounds/', lines.join('\n'), { 'content-type': 'application/x-ndjson' });
  expect(r.json).toMatchObject({ indexed: 3500, total: 3500 });
  for (const id of [0, 299, 300, 699]) expect((await call(server, 'GET', `/rounds/${id}`)).json).toMatchObject({ round: 4, _version: 5 });
  expect((await call(server, 'COUNT', '/rounds/?q=text:round')).json.total).toBe(700);
  expect((await call(server, 'COUNT', '/rounds/?q=round:4')).json.total).toBe(700);
  expect((await call(server, 'COUNT', '/rounds/?q=round:3')).json.total).toBe(0);
}, 60_000);

it('takes a JSON array and a MessagePack sequence; generates IDs when absent', async () => {
  const a = await call(server, 'RESTORE', '/bulk-json/', JSON.stringify([{ _id: 'a', n: 1 }, { _id: 'b', n: 2 }]), { 'content-type': 'application/json' });
  expect(a.json).toMatchObject({ indexed: 2, total: 2 });
  const m = await call(server, 'RESTORE', '/bulk-msgpack/', Buffer.concat([encode({ n: 1 }), encode({ n: 2 })].map((x) => Buffer.from(x))), { 'content-type': 'application/x-msgpack' });
  expect(m.json).toMatchObject({ indexed: 2, total: 2 });
  const id = m.json.items[1]._id;
  expect((await call(server, 'GET', `/bulk-msgpack/${id}`)).json.n).toBe(2);
});

it('reports bad items without stopping the rest; update and patch items', async () => {
  await call(server, 'PUT', '/bulk-mixed/1', { n: 1, tags: ['a'] });
  const body = [
    '{"_id": 2, "n": 2}',
    '{"_id": 3, "n": "three"}',
    '{"_id": 4, "n": ',
    '{"_id": 1, "_op_type": "update", "extra": true}',
    '{"_id": 1, "_op_type": "patch", "_patch": [{"op": "add", "path": "/tags/-", "value": "b"}]}',
    '{"_id": 9, "_op_type": "update", "n": 9}',
    '{"_id": 5, "_op_type": "explode"}',
    '[1, 2]',
    '{"_id": 10, "_op_type": "merge", "n": 10}',
    '{"_id": 11, "_op_type": "patch", "_patch": [{"op": "add", "path": "/n", "value": 11}]}',
  ].join('\n');
  const r = await call(server, 'RESTORE', '/bulk-mixed/', body, { 'content-type': 'application/x-ndjson' });
  expect(r.status).toBe(200);
  expect(r.json.total).toBe(10);
  expect(r.json.indexed).toBe(6);
  const statuses = r.json.items.map((i: { status?: number; _id?: unknown }) => i.status ?? 200);
  expect(statuses).toEqual([200, 400, 400, 200, 200, 200, 400, 400, 200, 200]);
  expect((await call(server, 'GET', '/bulk-mixed/1')).json).toMatchObject({ n: 1, extra: true, tags: ['a', 'b'], _version: 3 });
  expect((await call(server, 'GET', '/bulk-mixed/3')).status).toBe(404);
  // An update, merge or patch item of a missing document indexes it as new (as Xapiand does).
  for (const n of [9, 10, 11]) expect((await call(server, 'GET', `/bulk-mixed/${n}`)).json).toMatchObject({ n, _version: 1 });
});

it('refuses a body that is not a sequence type, and broken framing', async () => {
  expect((await call(server, 'RESTORE', '/bulk-bad/', 'a: 1', { 'content-type': 'application/x-yaml' })).status).toBe(415);
  expect((await call(server, 'RESTORE', '/bulk-bad/', '{"a": 1}', { 'content-type': 'application/json' })).status).toBe(400);
});

it('streams a large NDJSON body in bounded memory', async () => {
  const line = (i: number) => `${JSON.stringify({ _id: i, text: 'x'.repeat(900) })}\n`;
  const n = 40_000; // ~37 MiB of NDJSON
  const { request } = await import('undici');
  async function* body() {
    for (let i = 0; i < n; i += 1000) yield Buffer.from(Array.from({ length: 1000 }, (_, j) => line(i + j)).join(''));
  }
  const { Readable } = await import('node:stream');
  const res = await request(`${server.url}/streamed/`, { method: 'RESTORE' as 'GET', body: Readable.from(body()), headers: { 'content-type': 'application/x-ndjson' } });
  const json = await res.body.json() as { indexed: number; total: number };
  expect(res.statusCode).toBe(200);
  expect(json).toMatchObject({ indexed: n, total: n });
  expect((await call(server, 'GET', `/streamed/${n - 1}`)).json.text).toHaveLength(900);
}, 120_000);
