/**
 * A worker for worker-pool.test.ts: answers each call with its worker number
 * and params, `node.info`/`node.stats` as a node with one copy would, and
 * exits on `crash` — the failure a pool must report.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { servePort } from '@tessera/rpc';

const worker = workerData as number;
if (parentPort === null) throw new Error('echo-worker runs as a worker thread');
servePort(parentPort, async (method, params) => {
  if (method === 'crash') process.exit(3);
  if (method === 'node.info') return { name: `w${worker}`, shards: [{ index: '/i/', shard: worker + 1, seq: 1, documents: 10 }] };
  if (method === 'node.stats') {
    return { name: `w${worker}`, shards: [], store: { bytes: 100, databases: 1, flushes: worker, stalls: 0 }, scripts: { cacheHits: 1, cacheMisses: 0, compiles: 0, runs: 2, failures: 0 } };
  }
  return { worker, method, params };
});
