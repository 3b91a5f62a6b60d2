/**
 * Issue 18, item 6: what the LevelDB databases of a server's shard copies
 * hold in memory is bounded by one figure for them all (storeMemoryBytesMax),
 * writes wait past twice that, and it is given back once the writes stop. Before, each copy kept a write buffer
 * of up to 2 × 32 MiB and a block cache of 8 MiB for itself: 3 indexes of 5
 * shards written at once held over 100 MB outside the JavaScript heap, and
 * kept it until the next writes.
 */
import { call, removeDir, startServer, tempDataDir, type Server } from './harness.js';
import { parsePrometheusText } from './prometheus-text.js';

const MiB = 1024 * 1024;
const BOUND = 16 * MiB;
let server: Server | undefined;

afterEach(async () => {
  await server?.stop();
  if (server !== undefined) removeDir(server.dataDir);
  server = undefined;
});

async function storeBytes(s: Server): Promise<number> {
  const families = parsePrometheusText((await call(s, 'GET', '/:metrics')).text);
  const samples = families.get('tessera_store_memory_bytes')?.samples ?? [];
  expect(samples.length).toBe(1);
  return samples[0].value;
}

it('bounds the LevelDB memory of 15 shard copies written at once, and gives it back once they are idle', async () => {
  const dataDir = tempDataDir();
  server = await startServer({ args: ['--port', '0', '--data', dataDir, '--shards', '5', '--store-memory-bytes-max', String(BOUND)] });
  const s = server;
  const indexes = ['/mem-a/', '/mem-b/', '/mem-c/'];
  // 128 KiB of text per document, few distinct words: cheap to index, heavy in LevelDB (the record and the oplog entry).
  const text = Array.from({ length: 128 * 1024 / 8 }, (_, i) => `w${i % 50} `.padEnd(8, 'x')).join('');
  const perIndex = 200; // ~25 MiB of records per index, ~75 MiB in all
  let highest = 0;
  for (let round = 0; round < perIndex / 10; round++) {
    await Promise.all(indexes.flatMap((index) => Array.from({ length: 10 }, async (_, k) => {
      const reply = await call(s, 'PUT', `${index}d${round * 10 + k}`, { text });
      expect(reply.status).toBe(200);
    })));
    highest = Math.max(highest, await storeBytes(s));
  }
  // Past the bound the fullest write buffers are written out; past twice the bound writes wait for that (LevelDB
  // writes them on one background thread): sampled four times a second, a round (30 × 128 KiB, twice) may come on top.
  expect(highest).toBeLessThan(2 * BOUND + 8 * MiB);
  // Idle 5 s: every copy's write buffer is written out (there is no block cache).
  let settled = Infinity;
  for (let waited = 0; waited < 15_000 && settled > 4 * MiB; waited += 500) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    settled = await storeBytes(s);
  }
  expect(settled).toBeLessThan(4 * MiB);
  const flushes = parsePrometheusText((await call(s, 'GET', '/:metrics')).text).get('tessera_store_memtable_flushes_total')?.samples[0]?.value ?? 0;
  expect(flushes).toBeGreaterThan(0);
  for (const index of indexes) {
    expect((await call(s, 'COUNT', index)).json).toMatchObject({ total: perIndex });
    expect((await call(s, 'GET', `${index}d${perIndex - 1}`)).json).toMatchObject({ text });
  }
}, 300_000);
