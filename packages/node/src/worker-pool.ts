/**
 * One shard node spread over worker threads (`tessera serve --shard-workers
 * N`): each worker hosts a ShardNode over the same node directory, and each
 * shard copy is served by one fixed worker (shard affinity), so the copies
 * of one node use several cores while the data directory stays the one of a
 * single node (`<node dir>/<index>/#<shard>`, shard-paths.ts) — a directory
 * written with workers opens without, and the other way round.
 *
 * To the coordinator it is one RpcClient: a call naming a copy goes to its
 * worker; `node.info` and `node.stats` go to every worker and their answers
 * are merged. A worker only ever opens the copies routed to it, so no two
 * threads open one LevelDB.
 *
 * A worker that fails (an uncaught error, an exit nobody asked for) fails
 * the calls waiting on it with 503 and is reported through `onFailure`; the
 * pool does not restart it (the embedded server treats it as it treats an
 * uncaught error of its main thread: crash-only, see docs/architecture.md).
 */
import { Worker } from 'node:worker_threads';
import {
  PortClient, type NodeCalls, type NodeInfoReply, type NodeStatsReply, type RpcCallOptions, type RpcClient, type RpcClientOptions,
} from '@tessera/rpc';

export interface ShardWorkerPoolOptions {
  /** Worker threads, at least 1. */
  workers: number;
  /** The workers' module: it serves a ShardNode on `parentPort` (rpc `servePort`), closing it on the port's close. */
  entry: URL;
  /** The `workerData` of worker `i` (0-based): the node's options, for its share of the copies. */
  workerData: (worker: number) => unknown;
  /** The node's name, as its merged `node.info` and `node.stats` give it. */
  name: string;
  /** Told once when a worker fails (uncaught error, unexpected exit); its waiting calls have failed with 503. */
  onFailure: (err: Error) => void;
  client?: Partial<RpcClientOptions>;
}

interface Slot {
  worker: Worker;
  client: PortClient;
}

export class ShardWorkerPool implements RpcClient<NodeCalls> {
  private readonly slots: Slot[];
  private closing: Promise<void> | undefined;
  private failed = false;

  constructor(private readonly options: ShardWorkerPoolOptions) {
    if (!Number.isInteger(options.workers) || options.workers < 1) throw new RangeError(`workers must be a positive integer, not ${options.workers}`);
    this.slots = Array.from({ length: options.workers }, (_, i) => this.start(i));
  }

  get size(): number {
    return this.slots.length;
  }

  get closed(): boolean {
    return this.closing !== undefined;
  }

  get inFlight(): number {
    return this.slots.reduce((sum, slot) => sum + slot.client.inFlight, 0);
  }

  /** The worker (0-based) that serves a shard copy: the same one for every call while the pool lives (the directory does not depend on it). */
  workerOf(index: string, shard: number): number {
    return (stringHash(index) + shard) % this.slots.length;
  }

  async call<M extends keyof NodeCalls & string>(method: M, params: NodeCalls[M][0], options?: RpcCallOptions): Promise<NodeCalls[M][1]> {
    if (method === 'node.info') return this.info(options) as Promise<NodeCalls[M][1]>;
    if (method === 'node.stats') return this.stats(options) as Promise<NodeCalls[M][1]>;
    const ref = params as { index?: unknown; shard?: unknown };
    // A call that names no copy cannot be routed: the first worker answers it (its ShardNode refuses what it does not know).
    const slot = typeof ref.index === 'string' && typeof ref.shard === 'number' && Number.isInteger(ref.shard)
      ? this.slots[this.workerOf(ref.index, ref.shard)] as Slot : this.slots[0] as Slot;
    return slot.client.call(method, params, options);
  }

  /** Every worker's ShardNode closes (flushing its copies), then the threads end. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.all(this.slots.map(async ({ worker, client }) => {
        await client.close();
        await worker.terminate();
      }));
    })();
    return this.closing;
  }

  private start(i: number): Slot {
    const worker = new Worker(this.options.entry, { workerData: this.options.workerData(i), name: `shard-worker-${i}` });
    const client = new PortClient(worker, this.options.client);
    worker.on('error', (err) => this.fail(client, err));
    worker.on('exit', (code) => {
      if (this.closing === undefined) this.fail(client, new Error(`shard worker ${i} exited (code ${code})`));
    });
    return { worker, client };
  }

  private fail(client: PortClient, err: Error): void {
    client.fail(err.message);
    if (this.failed) return;
    this.failed = true;
    this.options.onFailure(err);
  }

  private async info(options?: RpcCallOptions): Promise<NodeInfoReply> {
    const replies = await Promise.all(this.slots.map(({ client }) => client.call('node.info', {}, options)));
    return { name: this.options.name, shards: replies.flatMap((reply) => reply.shards) };
  }

  /** Each worker's figures of its copies, and its budgets and script runner summed: the node's as one ShardNode would give them. */
  private async stats(options?: RpcCallOptions): Promise<NodeStatsReply> {
    const replies = await Promise.all(this.slots.map(({ client }) => client.call('node.stats', {}, options)));
    const merged: NodeStatsReply = { name: this.options.name, shards: replies.flatMap((reply) => reply.shards) };
    for (const reply of replies) {
      if (reply.store !== undefined) merged.store = sumFields(merged.store, reply.store);
      if (reply.scripts !== undefined) merged.scripts = sumFields(merged.scripts, reply.scripts);
    }
    return merged;
  }
}

/** `a + b` field by field (`b` alone when there is no `a`). */
function sumFields<T extends Record<string, number>>(a: T | undefined, b: T): T {
  if (a === undefined) return { ...b };
  const sum = { ...a };
  for (const key of Object.keys(b) as Array<keyof T>) sum[key] = ((a[key] ?? 0) + b[key]) as T[keyof T];
  return sum;
}

/** FNV-1a of an index path: spreads the copies of several indexes over the workers. */
function stringHash(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
