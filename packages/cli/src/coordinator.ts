/**
 * `tessera coordinator`: the HTTP API (the same handlers as `serve`) with no
 * shard node of its own, and an RPC listener that shard nodes join
 * (`tessera node --join ws://host:rpcPort`). Its data directory holds only
 * the cluster state (`cluster-state.json`): indexes, schemas, allocation and
 * the names of the nodes that have joined. It is locked (data-lock.ts) for
 * the life of the process.
 */
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { admitPeer, NodeDirectory } from '@tessera/coordinator';
import { RpcServer } from '@tessera/rpc';
import type { Logger } from 'pino';
import { lockDataDirectory } from './data-lock.js';
import { createCoordinator, listenHttp, type HttpApiOptions, type RunningServer } from './serve.js';

export interface CoordinatorProcessOptions extends HttpApiOptions {
  /** The coordinator's name in `GET /` and `/.nodes`; no node may take it. */
  name: string;
  rpcHost: string;
  /** 0 picks a free port (logged as `rpc listening`). */
  rpcPort: number;
}

export const COORDINATOR_DEFAULTS = {
  name: 'coordinator',
  rpcHost: '127.0.0.1',
  rpcPort: 8890,
} as const;

export interface RunningCoordinator extends RunningServer {
  rpcPort: number;
}

export async function runCoordinator(options: CoordinatorProcessOptions, log: Logger): Promise<RunningCoordinator> {
  const dataDir = resolve(options.dataDir);
  await mkdir(dataDir, { recursive: true });
  // Before the cluster state is read or written.
  const dataLock = await lockDataDirectory(dataDir);
  const nodes = new NodeDirectory();
  const coordinator = await createCoordinator({ ...options, dataDir }, options.name, nodes, log);
  const rpcLog = log.child({ component: 'rpc' });
  const rpc = await RpcServer.listen({
    host: options.rpcHost,
    port: options.rpcPort,
    identity: { name: options.name, role: 'coordinator' },
    logger: rpcLog,
    onPeer: (peer, hello) => admitPeer(peer, hello, { directory: nodes, coordinatorName: options.name, log }),
  });
  log.info({ host: options.rpcHost, port: rpc.port, url: rpc.url }, 'rpc listening');
  let http: Awaited<ReturnType<typeof listenHttp>>;
  try {
    http = await listenHttp(coordinator, options, log, { dataDir, rpcPort: rpc.port });
  } catch (err) {
    await rpc.close();
    throw err;
  }
  return {
    port: http.port,
    host: http.host,
    rpcPort: rpc.port,
    async close() {
      // Requests in flight still reach their nodes; then the nodes are let go (they redial until a coordinator is back).
      await http.close(options.shutdownGraceMs);
      await rpc.close();
      await dataLock.release();
    },
  };
}
