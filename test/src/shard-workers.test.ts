/**
 * `tessera serve --shard-workers N` as a real process: the node's copies on
 * worker threads (@tessera/node worker-pool.ts) answer writes, GETs,
 * SEARCH and COUNT with exact totals across shards, and stored content byte
 * for byte; the data directory is the one of the in-process node, so it
 * opens with and without workers, both ways; SIGTERM flushes every worker's
 * copies and exits 0.
 */
import { randomBytes } from 'node:crypto';
import { call, removeDir, startServer, tempDataDir, type Server } from './harness.js';

const DOCUMENTS = 60;

function serveWith(dataDir: string, workers: string): Promise<Server> {
  return startServer({ dataDir, args: ['--port', '0', '--data', dataDir, '--shard-workers', workers] });
}

async function expectTotals(server: Server, documents: number): Promise<void> {
  expect((await call(server, 'COUNT', '/books/')).json.total).toBe(documents);
  const red = await call(server, 'SEARCH', '/books/', { _query: { colour: 'red' }, _limit: 1000 });
  expect(red.json.total).toBe(documents / 2);
  expect(red.json.hits).toHaveLength(documents / 2);
  expect(new Set(red.json.hits.map((hit: { '#shard': number }) => hit['#shard'])).size).toBe(5);
}

describe('tessera serve --shard-workers', () => {
  const dataDir = tempDataDir('tessera-workers-');
  const blob = randomBytes(3 * 1024 * 1024 + 17);
  afterAll(() => removeDir(dataDir));

  it('serves writes, reads, searches and stored content from worker threads, and stops cleanly', async () => {
    const server = await serveWith(dataDir, '2');
    try {
      expect(server.logs.find((l) => l.msg === 'shard copies served by worker threads')).toMatchObject({ shardWorkers: 2 });
      expect((await call(server, 'PUT', '/books/', { _settings: { number_of_shards: 5 } })).status).toBe(200);
      const writes = await Promise.all(Array.from({ length: DOCUMENTS }, (_, i) =>
        call(server, 'PUT', `/books/b${i}`, { title: `book ${i}`, colour: i % 2 === 0 ? 'red' : 'blue', n: i })));
      expect(writes.map((w) => w.status)).toEqual(Array(DOCUMENTS).fill(200));
      expect((await call(server, 'GET', '/books/b7')).json).toMatchObject({ _id: 'b7', title: 'book 7', n: 7 });
      expect((await call(server, 'GET', '/books/missing')).status).toBe(404);
      expect((await call(server, 'UPDATE', '/books/b7', { n: 70 })).json).toMatchObject({ _version: 2 });
      expect((await call(server, 'COMMIT', '/books/')).status).toBe(200);
      await expectTotals(server, DOCUMENTS);

      const stored = await call(server, 'PUT', '/files/one', blob, { 'content-type': 'application/octet-stream' });
      expect(stored.status).toBe(200);
      const read = await call(server, 'GET', '/files/one', undefined, { accept: 'application/octet-stream' });
      expect(read.status).toBe(200);
      expect(read.bytes.equals(blob)).toBe(true);

      expect((await call(server, 'GET', '/readyz')).status).toBe(200);
      const metrics = (await call(server, 'GET', '/:metrics')).text;
      expect(metrics).toMatch(/tessera_documents\{index="\/books\/"\} 60/);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it('opens the same data directory without workers, and data written without them with workers', async () => {
    const inProcess = await serveWith(dataDir, '0');
    try {
      expect(inProcess.logs.find((l) => l.msg === 'shard copies served on the main thread')).toMatchObject({ shardWorkers: 0 });
      await expectTotals(inProcess, DOCUMENTS);
      expect((await call(inProcess, 'GET', '/books/b7')).json).toMatchObject({ n: 70, _version: 2 });
      expect((await call(inProcess, 'GET', '/files/one', undefined, { accept: 'application/octet-stream' })).bytes.equals(blob)).toBe(true);
      const more = await Promise.all(Array.from({ length: 20 }, (_, i) =>
        call(inProcess, 'PUT', `/books/c${i}`, { title: `more ${i}`, colour: i % 2 === 0 ? 'red' : 'blue' })));
      expect(more.every((w) => w.status === 200)).toBe(true);
    } finally {
      expect(await inProcess.stop()).toBe(0);
    }
    const workers = await serveWith(dataDir, '3');
    try {
      await expectTotals(workers, DOCUMENTS + 20);
      expect((await call(workers, 'GET', '/books/c3')).json).toMatchObject({ title: 'more 3' });
      expect((await call(workers, 'GET', '/files/one', undefined, { accept: 'application/octet-stream' })).bytes.equals(blob)).toBe(true);
    } finally {
      expect(await workers.stop()).toBe(0);
    }
  });
});
