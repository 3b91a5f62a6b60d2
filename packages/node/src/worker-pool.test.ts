import type { AnyCalls, RpcClient } from '@tessera/rpc';
import { ShardWorkerPool } from './worker-pool.js';

const ENTRY = new URL('./test-support/echo-worker.js', import.meta.url);

function pool(workers: number, failures: Error[] = []): ShardWorkerPool {
  return new ShardWorkerPool({ workers, entry: ENTRY, name: 'node1', workerData: (i) => i, onFailure: (err) => failures.push(err) });
}

/** The pool's calls, with the test worker's made-up methods. */
const anyCalls = (p: ShardWorkerPool): RpcClient<AnyCalls> => p as unknown as RpcClient<AnyCalls>;

describe('ShardWorkerPool', () => {
  it('sends every call about a copy to the same worker, and spreads the copies of an index over all of them', async () => {
    const p = pool(3);
    try {
      const workerOf = async (index: string, shard: number): Promise<number> =>
        ((await anyCalls(p).call('doc.get', { index, shard, id: 'x' })) as { worker: number }).worker;
      for (let shard = 1; shard <= 6; shard++) {
        const first = await workerOf('/books/', shard);
        expect(first).toBe(p.workerOf('/books/', shard));
        expect(await workerOf('/books/', shard)).toBe(first);
      }
      expect(new Set([1, 2, 3].map((shard) => p.workerOf('/books/', shard))).size).toBe(3);
    } finally {
      await p.close();
    }
  });

  it('asks every worker for node.info and node.stats and merges their answers under the node name', async () => {
    const p = pool(2);
    try {
      expect(await p.call('node.info', {})).toEqual({
        name: 'node1', shards: [{ index: '/i/', shard: 1, seq: 1, documents: 10 }, { index: '/i/', shard: 2, seq: 1, documents: 10 }],
      });
      expect(await p.call('node.stats', {})).toEqual({
        name: 'node1', shards: [], store: { bytes: 200, databases: 2, flushes: 1, stalls: 0 },
        scripts: { cacheHits: 2, cacheMisses: 0, compiles: 0, runs: 4, failures: 0 },
      });
    } finally {
      await p.close();
    }
  });

  it('reports a worker that exits, once, and fails its calls with 503', async () => {
    const failures: Error[] = [];
    const p = pool(2, failures);
    try {
      const crash = anyCalls(p).call('crash', { index: '/i/', shard: 1 });
      await expect(crash).rejects.toMatchObject({ code: 'rpc_unavailable', status: 503 });
      await expect(anyCalls(p).call('again', { index: '/i/', shard: 1 })).rejects.toMatchObject({ code: 'rpc_unavailable' });
      expect(failures.map((err) => err.message)).toEqual([expect.stringMatching(/shard worker \d exited \(code 3\)/)]);
    } finally {
      await p.close();
    }
  });
});
