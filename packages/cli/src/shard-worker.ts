/**
 * A worker thread of `tessera serve --shard-workers N` (@tessera/node
 * worker-pool.ts): one ShardNode over the node's directory, serving the
 * copies the pool routes to this worker on `parentPort`. It logs as the main
 * thread does (JSON lines on standard output, its own destination), bound to
 * its worker number; closing (SIGTERM on the main thread) flushes and closes
 * its copies, then lets its last lines out.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ShardNode } from '@tessera/node';
import { servePort } from '@tessera/rpc';
import { createLogger } from './logging.js';
import { LOG_DRAIN_MS_MAX } from './lifecycle.js';
import { shardNodeOptions, type ShardHostOptions } from './shard-host.js';

/** What the main thread gives each worker (serve.ts). */
export interface ShardWorkerData {
  worker: number;
  name: string;
  /** The node's directory (`<data>/nodes/<name>`), locked by the main thread. */
  nodeDir: string;
  /** This worker's share of the node's budgets (serve.ts divides them). */
  host: ShardHostOptions;
  logLevel: string;
  logPretty: boolean;
}

if (parentPort === null) throw new Error('shard-worker.js runs as a worker thread of tessera serve');
const port = parentPort;
const data = workerData as ShardWorkerData;
const { log, destination } = await createLogger({ level: data.logLevel, pretty: data.logPretty });
const workerLog = log.child({ worker: data.worker });
// The workers share the node's directory and a commit log has one writer: theirs is off (serve.ts replayed it first).
const node = new ShardNode({ ...shardNodeOptions(data.host, data.name, data.nodeDir, workerLog), commitLog: false });
node.warm();
servePort(port, node.handle, {
  close: async () => {
    await node.close();
    await destination.drain(LOG_DRAIN_MS_MAX);
  },
  onUnexpected: (err, method) => workerLog.error({ err, method }, 'shard call failed'),
});
