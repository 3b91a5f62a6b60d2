/**
 * `tessera coordinator`: the HTTP API (the same handlers as `serve`) with no
 * shard node of its own, and an RPC listener that shard nodes join
 * (`tessera node --join ws://host:rpcPort`). Its data directory holds only
 * the cluster state (`cluster-state.json`): indexes, schemas, allocation and
 * the names of the nodes that have joined. It is locked (data-lock.ts) for
 * the life of the process.
 *
 * With `--etcd`, the cluster state lives in etcd instead, and every
 * coordinator given the same etcd and prefix serves the same cluster: each
 * registers under its own lease, one is elected to decide and relay writes,
 * the others run document writes up to their routed call, which the
 * elected one runs, and forward the rest to it (@tessera/coordinator
 * coordinator-group.ts, leader-link.ts).
 *
 * With `--tls-cert/--tls-key` both listeners use the certificate: HTTPS for
 * the API, `wss://` for the nodes; with `--cluster-secret` a node must
 * present the same secret to join (docs/tls-cors.md).
 */
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { hostname } from 'node:os';
import {
  admitPeer, CoordinatorGroup, EMPTY_CLUSTER_STATE, EtcdStateStore, NodeDirectory, type ClusterState,
} from '@tessera/coordinator';
import { RpcServer } from '@tessera/rpc';
import type { Logger } from 'pino';
import { lockDataDirectory } from './data-lock.js';
import { createCoordinator, listenHttp, type HttpApiOptions, type RunningServer } from './serve.js';
import { loadCa, loadServerTls, reloadTlsOnHangup } from './tls-files.js';

export interface CoordinatorProcessOptions extends HttpApiOptions {
  /** The coordinator's name in `GET /` and `/.nodes`; no node may take it. */
  name: string;
  rpcHost: string;
  /** 0 picks a free port (logged as `rpc listening`). */
  rpcPort: number;
  /** etcd client URLs; empty: the cluster state is a file in the data directory. */
  etcd: string[];
  /** Root of this cluster's keys in etcd. */
  etcdPrefix: string;
  /** Lease of this coordinator's registration and election in etcd, ms. */
  coordinatorLeaseMs: number;
  /** CA file (PEM) for another coordinator's https:// certificate when forwarding to it; '' for the system's CAs. */
  tlsCa: string;
  /** Nodes must present this secret to join; '' asks none. */
  clusterSecret: string;
}

export const COORDINATOR_DEFAULTS = {
  name: 'coordinator',
  rpcHost: '127.0.0.1',
  rpcPort: 8890,
  etcd: '',
  etcdPrefix: '/tessera',
  coordinatorLeaseMs: 5_000,
} as const;

export interface RunningCoordinator extends RunningServer {
  rpcPort: number;
}

export async function runCoordinator(options: CoordinatorProcessOptions, log: Logger): Promise<RunningCoordinator> {
  // Before anything is locked or opened: an unusable certificate stops the start here.
  const tls = await loadServerTls(options);
  const forwardCa = await loadCa(options.tlsCa);
  const dataDir = resolve(options.dataDir);
  await mkdir(dataDir, { recursive: true });
  // Before the cluster state is read or written.
  const dataLock = await lockDataDirectory(dataDir);
  const nodes = new NodeDirectory();
  const shared = options.etcd.length === 0 ? undefined : { ...await joinEtcd(options, log), forwardCa, clusterSecret: options.clusterSecret };
  let coordinator: Awaited<ReturnType<typeof createCoordinator>>;
  try {
    coordinator = await createCoordinator({ ...options, dataDir }, options.name, nodes, log, shared);
  } catch (err) {
    await leaveEtcd(shared);
    throw err;
  }
  const rpcLog = log.child({ component: 'rpc' });
  const rpc = await RpcServer.listen({
    host: options.rpcHost,
    port: options.rpcPort,
    identity: { name: options.name, role: 'coordinator' },
    logger: rpcLog,
    onPeer: (peer, hello) => admitPeer(peer, hello, {
      directory: nodes, coordinatorName: options.name, log, ...(shared === undefined ? {} : { coordinatorCalls: coordinator.leaderCalls }),
    }),
    ...(tls === undefined ? {} : { tls }),
    ...(options.clusterSecret === '' ? {} : { clusterSecret: options.clusterSecret }),
  });
  log.info({ host: options.rpcHost, port: rpc.port, url: rpc.url, clusterSecret: options.clusterSecret !== '' }, 'rpc listening');
  let http: Awaited<ReturnType<typeof listenHttp>>;
  try {
    http = await listenHttp(coordinator, options, log, { dataDir, rpcPort: rpc.port }, tls);
    const secure = tls === undefined ? '' : 's';
    await shared?.group.advertise({
      http: `http${secure}://${advertisedHost(options.host)}:${http.port}`, rpc: `ws${secure}://${advertisedHost(options.rpcHost)}:${rpc.port}`,
    });
  } catch (err) {
    await rpc.close();
    await leaveEtcd(shared);
    throw err;
  }
  const stopReloading = tls === undefined ? undefined : reloadTlsOnHangup(options, [http, rpc], log);
  return {
    port: http.port,
    host: http.host,
    rpcPort: rpc.port,
    async close() {
      stopReloading?.();
      // Requests in flight still reach their nodes; then the nodes are let go (they redial until a coordinator is back).
      await http.close(options.shutdownGraceMs);
      // The lease revoked: another coordinator is elected at once rather than after the lease.
      await leaveEtcd(shared);
      await coordinator.close();
      await rpc.close();
      await dataLock.release();
    },
  };
}

interface SharedState {
  store: EtcdStateStore<ClusterState>;
  group: CoordinatorGroup;
}

async function joinEtcd(options: CoordinatorProcessOptions, log: Logger): Promise<SharedState> {
  const store = await EtcdStateStore.open<ClusterState>({ endpoints: options.etcd, prefix: options.etcdPrefix, initial: EMPTY_CLUSTER_STATE });
  try {
    const group = await CoordinatorGroup.join({ store: store as EtcdStateStore<unknown>, name: options.name, leaseMs: options.coordinatorLeaseMs, log });
    log.info({ etcd: options.etcd, prefix: options.etcdPrefix, elected: group.isLeader }, 'cluster state in etcd');
    return { store, group };
  } catch (err) {
    await store.close();
    throw err;
  }
}

async function leaveEtcd(shared: SharedState | undefined): Promise<void> {
  if (shared === undefined) return;
  await shared.group.close();
  await shared.store.close();
}

/** The address other coordinators reach this one at: the host it listens on, or this machine's name for a wildcard. */
function advertisedHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return hostname();
  return host.includes(':') ? `[${host}]` : host;
}
