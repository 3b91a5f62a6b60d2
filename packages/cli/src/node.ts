/**
 * `tessera node`: a shard-node process with no HTTP. It hosts shard copies
 * (one engine each) under `<data>/nodes/<name>/`, the same layout as the
 * embedded server's node, joins the coordinators by dialling each one's RPC
 * address (several share one cluster through etcd), and serves their calls
 * over those connections. After a loss it redials with backoff until the
 * coordinator is back. On SIGTERM it stops
 * taking calls, lets those running finish (up to shutdownGraceMs), leaves,
 * and closes its shards (flushing what is pending).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  etcdLeasedKey, NODE_REFUSED_METHOD, nodeRegistrationKey, SHARD_NODE_HELLO_ROLE, type NodeAnnouncement, type NodeRegistration,
} from '@tessera/coordinator';
import { TesseraError } from '@tessera/errors';
import { PrimaryLease, PRIMARY_LEASE_DEFAULTS, ShardNode } from '@tessera/node';
import { connectPeer, type RpcHandler, type RpcPeer } from '@tessera/rpc';
import type { Logger } from 'pino';
import { lockDataDirectory } from './data-lock.js';
import { EtcdRegistration } from './node-lease.js';
import { startRelay } from './relay.js';
import { loadCa, loadServerTls, reloadTlsOnHangup } from './tls-files.js';
import { shardNodeOptions, type ShardHostOptions } from './shard-host.js';
import { TESSERA_VERSION } from './version.js';

export interface NodeProcessOptions extends ShardHostOptions {
  /** The coordinators' RPC addresses, `ws://host:port`: the node connects to each. */
  join: string[];
  /** Shard copies are allocated to this name: keep it (and the data directory) across restarts. */
  name: string;
  dataDir: string;
  /** Time the calls running at SIGTERM get to finish. */
  shutdownGraceMs: number;
  /** Writes as primary are refused this long after the coordinator was last heard (@tessera/node primary-lease.ts). */
  primaryLeaseMs: number;
  /** CA file (PEM) a wss:// coordinator's or relay listener's certificate is verified against; '' for the system's CAs. */
  tlsCa: string;
  /** Certificate chain and key files (PEM) of the relay listener, which then serves wss://; '' for neither. */
  tlsCert: string;
  tlsKey: string;
  /** Presented to the coordinators when joining (their --cluster-secret); '' presents none. */
  clusterSecret: string;
  /** etcd client URLs of the coordinators' cluster state: the node keeps a lease there (node-lease.ts); empty: none. */
  etcd: string[];
  /** Root of the cluster's keys in etcd (the coordinators' --etcd-prefix). */
  etcdPrefix: string;
  /** TTL of the node's etcd lease, ms. */
  nodeLeaseMs: number;
  /** Address the relay listener listens on and the node announces. */
  relayHost: string;
  /** Port of the relay listener (0: a free one); undefined: none (relay.ts). */
  relayPort?: number;
}

export const NODE_DEFAULTS = {
  join: 'ws://127.0.0.1:8890',
  primaryLeaseMs: PRIMARY_LEASE_DEFAULTS.leaseMs,
  nodeLeaseMs: 5_000,
  relayHost: '127.0.0.1',
  relayPort: 'off',
} as const;

/** A refused node (say, its name taken by another active node) asks again after this. */
const REFUSED_RETRY_MS = 5000;
/** While draining at shutdown, how often the calls still running are counted. */
const DRAIN_POLL_MS = 20;

export interface RunningNode {
  close(): Promise<void>;
}

export async function runNode(options: NodeProcessOptions, log: Logger): Promise<RunningNode> {
  const ca = await loadCa(options.tlsCa);
  const relayTls = await loadServerTls(options);
  const dataDir = resolve(options.dataDir);
  const nodeDir = join(dataDir, 'nodes', options.name);
  await mkdir(nodeDir, { recursive: true });
  // Before node.json or a shard copy is touched: one process per node directory.
  const nodeLock = await lockDataDirectory(nodeDir);
  const instance = await nodeInstance(nodeDir, options.name);
  // One connection per coordinator: any of them may read from this node; the elected one writes and decides.
  const peers = new Map<string, RpcPeer>();
  const lease = new PrimaryLease({
    leaseMs: options.primaryLeaseMs,
    // The latest word from any coordinator: writes as primary come only from the elected one, which is one of them.
    lastHeardAt: () => latest([...peers.values()].map((peer) => peer.lastHeardAt)),
    onExpired: (silentMs) => log.warn({ silentMs, leaseMs: options.primaryLeaseMs }, 'primary lease expired: no writes as primary until the coordinator is heard again'),
    onRenewed: () => log.info('coordinator heard again: primary lease renewed'),
  });
  const rpcLog = log.child({ component: 'rpc' });
  // Writes a cluster carries over TLS are relayed over TLS too.
  if (options.relayPort !== undefined && relayTls === undefined && options.join.some((url) => url.startsWith('wss:'))) {
    throw new Error('--relay-port: these coordinators are joined over wss://, so the relay listener needs --tls-cert and --tls-key to serve wss:// too (or leave --relay-port off: the elected coordinator then relays)');
  }
  let node: ShardNode | undefined;
  // Before the node: a primary here relays through it; other nodes' relays arrive through its listener.
  const relay = options.relayPort === undefined ? undefined : await startRelay({
    name: options.name, host: options.relayHost, port: options.relayPort, clusterSecret: options.clusterSecret, logger: rpcLog,
    ...(relayTls === undefined ? {} : { tls: relayTls }), ...(ca === undefined ? {} : { ca }),
    handler: (method, params) => (node === undefined ? Promise.reject(new Error('not started')) : node.handle(method, params)),
  });
  node = new ShardNode({
    ...shardNodeOptions(options, options.name, nodeDir, log), primaryWriteGate: (where) => lease.check(where), ...(relay === undefined ? {} : { relayPeers: relay }),
  });
  const shardNode = node;
  shardNode.warm();
  const stopReloading = relay === undefined || relayTls === undefined ? undefined : reloadTlsOnHangup(options, [relay], log);
  // Registered before joining: a coordinator that sees this node join sees its registration too (or an old one's end first).
  const registration = options.etcd.length === 0 ? undefined : await EtcdRegistration.start({
    endpoints: options.etcd,
    key: etcdLeasedKey(options.etcdPrefix, nodeRegistrationKey(options.name)),
    value: { instance, host: hostname(), pid: process.pid } satisfies NodeRegistration,
    ttlMs: options.nodeLeaseMs,
    log,
  });
  const announcement: NodeAnnouncement = {
    dataDir, pid: process.pid, instance, host: hostname(), version: TESSERA_VERSION, ...(registration === undefined ? {} : { etcdLease: true }),
    ...(relay === undefined ? {} : { relay: relay.url }),
  };
  let draining = false;
  const retries = new Set<NodeJS.Timeout>();

  const refused = (url: string, params: unknown): void => {
    const reason = (params as { reason?: unknown } | null)?.reason;
    log.error({ url, reason: typeof reason === 'string' ? reason : 'no reason given', retryMs: REFUSED_RETRY_MS }, 'the coordinator refused this node');
    const refusedPeer = peers.get(url);
    // After this call's answer is written: leave, and ask again later rather than redial at once.
    setImmediate(() => {
      void refusedPeer?.close().then(() => {
        if (draining || peers.get(url) !== refusedPeer) return;
        const retry = setTimeout(() => {
          retries.delete(retry);
          if (!draining) peers.set(url, dial(url));
        }, REFUSED_RETRY_MS);
        retries.add(retry);
      });
    });
  };
  const handlerFor = (url: string): RpcHandler => async (method, params) => {
    if (method === NODE_REFUSED_METHOD) {
      refused(url, params);
      return null;
    }
    if (draining) throw new TesseraError('node_closing', 503, 'Shard node is shutting down');
    return shardNode.handle(method, params);
  };
  const dial = (url: string): RpcPeer => {
    const dialled = connectPeer(url, {
      identity: { name: options.name, role: SHARD_NODE_HELLO_ROLE, info: { ...announcement } },
      handler: handlerFor(url),
      logger: rpcLog,
      ...(ca === undefined ? {} : { ca }),
      ...(options.clusterSecret === '' ? {} : { clusterSecret: options.clusterSecret }),
    });
    // Connected is not yet admitted: a refusal (node.refused) may follow at once.
    dialled.on('connected', (hello) => log.info({ coordinator: hello.name, url }, 'connected to the coordinator'));
    dialled.on('lost', (err) => {
      if (!draining) log.warn({ reason: err.message, url }, 'lost the coordinator; redialing');
    });
    return dialled;
  };
  for (const url of new Set(options.join)) peers.set(url, dial(url));
  lease.start();
  log.info({ urls: options.join, name: options.name, dataDir, instance, ...(relay === undefined ? {} : { relay: relay.url }) }, 'joining');

  return {
    async close() {
      draining = true;
      stopReloading?.();
      for (const retry of retries) clearTimeout(retry);
      lease.stop();
      const deadline = Date.now() + options.shutdownGraceMs;
      const serving = (): number => [...peers.values()].reduce((sum, peer) => sum + peer.serving, 0);
      while (serving() > 0 && Date.now() < deadline) await sleep(DRAIN_POLL_MS);
      await Promise.all([...peers.values()].map((peer) => peer.close()));
      // After the connections: coordinators see this node leave as a closed connection, then its lease revoked.
      await registration?.close();
      await relay?.close();
      await shardNode.close();
      await nodeLock.release();
    },
  };
}

function latest(times: Array<number | undefined>): number | undefined {
  let out: number | undefined;
  for (const time of times) if (time !== undefined && (out === undefined || time > out)) out = time;
  return out;
}

/**
 * The identity of a node's data directory (see NodeEntry.instance), made on
 * first start and kept in `node.json`: the coordinator tells this node
 * restarting from another process taking its name.
 */
async function nodeInstance(nodeDir: string, name: string): Promise<string> {
  const file = join(nodeDir, 'node.json');
  let text: string | undefined;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (text !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const instance = (parsed as { instance?: unknown } | undefined)?.instance;
    if (typeof instance !== 'string' || instance.length === 0) throw new Error(`${file} is damaged (no instance): remove it, and the node makes a new one when it starts`);
    return instance;
  }
  const instance = randomUUID();
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify({ name, instance, createdAt: new Date().toISOString() }, null, 1)}\n`);
  await rename(tmp, file);
  return instance;
}
