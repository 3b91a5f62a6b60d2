/**
 * `_store: false` (API.md §8.2): indexed, not kept in the document. The
 * shard indexes a form with the field while it stores the body without it;
 * the indexed form survives updates that do not touch the field, a crash
 * (replayed from the operation log), a restart and replication.
 */
import { call, removeDir, startServer, tempDataDir, type Server } from './harness.js';
import { SERVER_KINDS, startServers } from './cluster-harness.js';

async function ids(server: Server, path: string, query: unknown): Promise<unknown[]> {
  const r = await call(server, 'SEARCH', path, { _query: query });
  expect(r.status).toBe(200);
  return r.json.hits.map((h: { _id: unknown }) => h._id).sort();
}

describe.each(SERVER_KINDS)('_store: false (%s)', (kind) => {
  let server: Server;
  beforeAll(async () => { server = await startServers(kind); });
  afterAll(async () => {
    await server.stop();
    removeDir(server.dataDir);
  });

  it('a field given _store: false in the body is searchable and never returned', async () => {
    const put = await call(server, 'PUT', '/secrets/1?commit', { title: 'one', secret: { _value: 'hidden treasure', _store: false } });
    expect(put.json).toEqual(expect.not.objectContaining({ secret: expect.anything() }));
    expect((await call(server, 'GET', '/secrets/1')).json).toEqual({ title: 'one', _id: 1, _version: 1, '#docid': expect.any(Number), '#shard': expect.any(Number) });
    expect(await ids(server, '/secrets/', { secret: 'treasure' })).toEqual([1]);
    const info = await call(server, 'INFO', '/secrets/1');
    expect(info.json.terms.secret).toHaveProperty('Streasure');
  });

  it('a schema field with _store: false: every document’s value is indexed; an update that leaves it alone keeps it indexed', async () => {
    await call(server, 'PUT', '/vault/', { _schema: { code: { _type: 'keyword', _store: false }, n: { _type: 'integer', _store: false } } });
    await call(server, 'PUT', '/vault/a', { code: 'RED', n: 5, label: 'a' });
    await call(server, 'PUT', '/vault/b', { code: 'BLUE', n: 50, label: 'b' });
    expect((await call(server, 'GET', '/vault/a')).json).not.toHaveProperty('code');
    expect(await ids(server, '/vault/', { code: 'red' })).toEqual(['a']);
    expect(await ids(server, '/vault/', { n: { _in: { _range: { _from: 10 } } } })).toEqual(['b']);
    await call(server, 'UPDATE', '/vault/a', { label: 'a2' });
    expect(await ids(server, '/vault/', { code: 'red' })).toEqual(['a']);
    await call(server, 'UPDATE', '/vault/a', { code: 'GREEN' });
    expect(await ids(server, '/vault/', { code: 'red' })).toEqual([]);
    expect(await ids(server, '/vault/', { code: 'green' })).toEqual(['a']);
    // A PUT without the field drops it from the index, as it replaces the document.
    await call(server, 'PUT', '/vault/b', { label: 'b2' });
    expect(await ids(server, '/vault/', { code: 'blue' })).toEqual([]);
  });
});

describe('_store: false across a crash', () => {
  let dataDir: string;
  let server: Server;
  beforeAll(() => { dataDir = tempDataDir(); });
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('the indexed form is replayed from the log after kill -9 and read back from the store after a restart', async () => {
    const args = ['--port', '0', '--data', dataDir, '--shards', '1'];
    server = await startServer({ dataDir, args });
    for (let i = 0; i < 20; i++) await call(server, 'PUT', `/crash/${i}`, { note: { _value: `word${i} common`, _store: false }, i });
    await call(server, 'COMMIT', '/crash/');
    await server.kill();
    server = await startServer({ dataDir, args });
    expect(await ids(server, '/crash/', { note: 'word7' })).toEqual([7]);
    expect((await call(server, 'COUNT', '/crash/', { _query: { note: 'common' } })).json.total).toBe(20);
    await call(server, 'UPDATE', '/crash/7', { i: 70 });
    expect(await server.stop()).toBe(0);
    server = await startServer({ dataDir, args });
    expect(await ids(server, '/crash/', { note: 'word7' })).toEqual([7]);
    expect((await call(server, 'GET', '/crash/7')).json).toMatchObject({ i: 70 });
    expect((await call(server, 'GET', '/crash/7')).json).not.toHaveProperty('note');
  });
});
