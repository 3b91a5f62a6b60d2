/**
 * Shard nodes joining over WebSocket (`tessera node --join`): the hello of an
 * accepted peer becomes the node's NodeDirectory entry, and the loss of its
 * connection (socket closed, heartbeat timeout) makes the node inactive. A
 * peer that cannot be admitted is told why with a `node.refused` call, then
 * closed; the node logs the reason and tries again later.
 */
import type { NodeCalls, PeerHello, RpcHandler, RpcPeer } from '@tessera/rpc';
import { COORDINATOR_HELLO_ROLE } from './leader-link.js';
import type { NodeDirectory, NodeEntry } from './nodes.js';

/** The hello role of a `tessera node` process. */
export const SHARD_NODE_HELLO_ROLE = 'node';
/** Its role in `/.nodes`: a shard node without HTTP. */
export const SHARD_NODE_ROLE = 'shard';
/** Coordinator → node: you are not admitted, and why (`{ reason }`). */
export const NODE_REFUSED_METHOD = 'node.refused' satisfies keyof NodeCalls;

/** What a shard node announces in its hello's `info` (all optional on the wire, checked here). */
export interface NodeAnnouncement {
  dataDir: string;
  pid: number;
  /** See NodeEntry.instance. */
  instance: string;
  host: string;
  version: string;
  /** It keeps a registration under an etcd lease of its own (NodeEntry.etcdLease). */
  etcdLease?: boolean;
  /** Its relay listener's address (NodeEntry.relay). */
  relay?: string;
}

/** Longest text accepted from a hello's info (names, paths): they end up in logs and /.nodes. */
const INFO_TEXT_CHARS_MAX = 4096;
/** How long a refused peer gets to hear why before its connection is closed. */
const REFUSAL_TIMEOUT_MS = 1000;

export interface AdmissionOptions {
  directory: NodeDirectory;
  /** The coordinator's own name, which no node may take. */
  coordinatorName: string;
  log: { warn(bindings: Record<string, unknown>, msg: string): void };
  /**
   * The handler of another coordinator's calls (role `coordinator`:
   * document writes it routed, revisions, leases; cluster/leader-link.ts),
   * for its connection. Absent: coordinators are refused as any other role.
   */
  coordinatorCalls?: (peer: RpcPeer) => RpcHandler;
}

/** RpcServer's `onPeer`: admit a joining shard node, or refuse it. */
export function admitPeer(peer: RpcPeer, hello: PeerHello, options: AdmissionOptions): void {
  const { directory } = options;
  if (hello.role === COORDINATOR_HELLO_ROLE && options.coordinatorCalls !== undefined && hello.name !== options.coordinatorName) {
    // Admitted by the cluster secret the RPC server checked; not a node, so not in the directory.
    peer.serve(options.coordinatorCalls(peer));
    return;
  }
  let reason: string | undefined;
  if (hello.role !== SHARD_NODE_HELLO_ROLE) reason = `only shard nodes (role '${SHARD_NODE_HELLO_ROLE}') join a coordinator, not role '${hello.role}'`;
  else if (hello.name === options.coordinatorName) reason = `node name '${hello.name}' is the coordinator's own name`;
  if (reason === undefined) {
    const outcome = directory.join(entryOf(peer, hello));
    if (!outcome.joined) reason = outcome.reason;
  }
  if (reason !== undefined) {
    options.log.warn({ node: hello.name, role: hello.role, reason }, 'node refused');
    void refuse(peer, reason);
    return;
  }
  // Attached in the same turn as the hello: a loss cannot slip in between.
  peer.once('lost', (err) => directory.leave(hello.name, peer, err.message));
  peer.once('closed', () => directory.leave(hello.name, peer, 'connection closed by the coordinator'));
}

function entryOf(peer: RpcPeer, hello: PeerHello): NodeEntry {
  const info = hello.info ?? {};
  const entry: NodeEntry = {
    name: hello.name,
    client: peer,
    host: text(info.host) ?? 'unknown',
    role: SHARD_NODE_ROLE,
    local: false,
    lastHeardAt: () => peer.lastHeardAt,
  };
  const dataDir = text(info.dataDir);
  if (dataDir !== undefined) entry.dataDir = dataDir;
  const instance = text(info.instance);
  if (instance !== undefined) entry.instance = instance;
  if (info.etcdLease === true) entry.etcdLease = true;
  const relay = text(info.relay);
  if (relay !== undefined && /^wss?:\/\//.test(relay)) entry.relay = relay;
  if (typeof info.pid === 'number' && Number.isSafeInteger(info.pid) && info.pid > 0) entry.pid = info.pid;
  return entry;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= INFO_TEXT_CHARS_MAX ? value : undefined;
}

async function refuse(peer: RpcPeer, reason: string): Promise<void> {
  await peer.call(NODE_REFUSED_METHOD, { reason }, { timeoutMs: REFUSAL_TIMEOUT_MS }).catch(() => undefined);
  await peer.close();
}
