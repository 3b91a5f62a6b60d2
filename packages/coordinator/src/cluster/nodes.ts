/**
 * Membership: the shard nodes a coordinator knows, whether each is active
 * now, and the RPC client that reaches it. The embedded server registers its
 * one in-process node; in a cluster, nodes join over WebSocket
 * (membership.ts) and leave when their connection is lost. Nodes named in
 * the cluster state but not (yet) joined are known and inactive, so a
 * restarted coordinator shows whom it waits for.
 *
 * Other parts of the coordinator follow membership through the events
 * `nodeJoined` and `nodeLost` (failover subscribes to them). Listeners run
 * synchronously, after the directory changed, and must not throw.
 */
import { EventEmitter } from 'node:events';
import type { RpcClient } from '@tessera/rpc';

export interface NodeEntry {
  name: string;
  client: RpcClient;
  /** Where the node runs: the host name it announced, or the embedded server's address. */
  host: string;
  /** HTTP port; absent for a shard node without HTTP (`tessera node`). */
  httpPort?: number;
  /** `coordinator+shard` (the embedded server), `shard` (a `tessera node` process). */
  role: string;
  /** Runs in the coordinator's own process. */
  local: boolean;
  /** The node's data directory, as it announced it. */
  dataDir?: string;
  pid?: number;
  /**
   * Identity of the node's data directory: a node that joins under an active
   * name with the same instance is that node restarted (its old connection
   * not yet found dead); with another instance it is a different process
   * claiming the name, and is refused.
   */
  instance?: string;
  /** It keeps a registration under an etcd lease of its own (`tessera node --etcd`, cluster/node-leases.ts). */
  etcdLease?: boolean;
  /**
   * The address of the node's relay listener (`tessera node --relay-port`):
   * other nodes dial it to relay a primary's writes to it, so its shards'
   * writes can go straight to their primaries (replication/replicator.ts).
   */
  relay?: string;
  /** Date.now() when the node was last heard from, when the transport knows. */
  lastHeardAt?: () => number | undefined;
}

export interface NodeStatus {
  name: string;
  active: boolean;
  /** The last-known entry; undefined for a node known from the cluster state that has not joined since this coordinator started. */
  entry: NodeEntry | undefined;
  /** Date.now() of the node's last join or loss (of this coordinator's start for a node not joined yet). */
  sinceMs: number;
  /** Why it is inactive. */
  reason?: string;
}

export interface NodeDirectoryEvents {
  /** A node joined (or rejoined): its entry is current and active. */
  nodeJoined: [NodeEntry];
  /** A node became inactive; the entry is its last-known one, kept in the directory. */
  nodeLost: [NodeEntry, string];
}

export type JoinOutcome = { joined: true } | { joined: false; reason: string };

interface Member {
  entry: NodeEntry | undefined;
  active: boolean;
  sinceMs: number;
  reason?: string;
}

export class NodeDirectory extends EventEmitter<NodeDirectoryEvents> {
  private readonly members = new Map<string, Member>();

  /** Register a node that is always there (the embedded server's own). */
  add(entry: NodeEntry): void {
    const outcome = this.join(entry);
    if (!outcome.joined) throw new Error(outcome.reason);
  }

  /**
   * A node joined with this entry. It replaces the node's previous entry (a
   * restart: same instance, or the old one already inactive); a different
   * process claiming the name of an active node is refused.
   */
  join(entry: NodeEntry): JoinOutcome {
    const current = this.members.get(entry.name);
    const old = current?.entry;
    if (current?.active === true && old !== undefined) {
      if (old.instance === undefined || old.instance !== entry.instance) {
        const where = old.dataDir === undefined ? '' : ` (data directory ${old.dataDir})`;
        return { joined: false, reason: `node name '${entry.name}' is taken by an active node${where}` };
      }
      this.markLost(current, 'restarted: replaced by its new connection');
      void old.client.close();
    }
    this.members.set(entry.name, { entry, active: true, sinceMs: Date.now() });
    this.emit('nodeJoined', entry);
    return { joined: true };
  }

  /**
   * The connection behind `client` is gone. The node becomes inactive if
   * `client` is still its current one (a rejoin may have replaced it already).
   */
  leave(name: string, client: RpcClient, reason: string): void {
    const member = this.members.get(name);
    if (member === undefined || !member.active || member.entry?.client !== client) return;
    this.markLost(member, reason);
  }

  /** Nodes known from the cluster state: listed, inactive, until they join. */
  expect(names: Iterable<string>): void {
    const now = Date.now();
    for (const name of names) {
      if (!this.members.has(name)) this.members.set(name, { entry: undefined, active: false, sinceMs: now, reason: 'not joined since the coordinator started' });
    }
  }

  /** The node's current (or last-known) entry. */
  get(name: string): NodeEntry | undefined {
    return this.members.get(name)?.entry;
  }

  isActive(name: string): boolean {
    return this.members.get(name)?.active === true;
  }

  /** Date.now() when a node that joined since this coordinator started was lost; undefined while active, or if it never joined. */
  lostSince(name: string): number | undefined {
    const member = this.members.get(name);
    return member === undefined || member.active || member.entry === undefined ? undefined : member.sinceMs;
  }

  /** Every node that joined since this coordinator started and is lost now, with `lostSince`. */
  lostNodes(): Map<string, number> {
    const lost = new Map<string, number>();
    for (const name of this.names()) {
      const since = this.lostSince(name);
      if (since !== undefined) lost.set(name, since);
    }
    return lost;
  }

  /** Every known name in a stable order (allocation is deterministic for the same membership). */
  names(): string[] {
    return [...this.members.keys()].sort();
  }

  /** Names of the active nodes, sorted. */
  activeNames(): string[] {
    return this.names().filter((name) => this.isActive(name));
  }

  /** Every known node with its state, by name. */
  all(): NodeStatus[] {
    return this.names().map((name) => {
      const m = this.members.get(name) as Member;
      const status: NodeStatus = { name, active: m.active, entry: m.entry, sinceMs: m.sinceMs };
      if (m.reason !== undefined) status.reason = m.reason;
      return status;
    });
  }

  private markLost(member: Member, reason: string): void {
    member.active = false;
    member.sinceMs = Date.now();
    member.reason = reason;
    if (member.entry !== undefined) this.emit('nodeLost', member.entry, reason);
  }
}

/**
 * Shard copies for a new index: primaries round-robin over the nodes, each
 * replica on the next distinct node, so no two copies of a shard share a node.
 * With fewer nodes than copies, the missing replicas stay unassigned.
 */
export function allocateShards(nodeNames: string[], shards: number, replicas: number, offset = 0): string[][] {
  const allocation: string[][] = [];
  const n = nodeNames.length;
  for (let s = 0; s < shards; s++) {
    const copies: string[] = [];
    for (let r = 0; r <= replicas && r < n; r++) copies.push(nodeNames[(offset + s + r) % n] as string);
    allocation.push(copies);
  }
  return allocation;
}
