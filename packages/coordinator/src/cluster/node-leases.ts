/**
 * Shard nodes' own etcd leases (docs/cluster.md "Node leases"): a node
 * started with `--etcd` keeps a lease in the cluster's etcd and registers
 * under it (`nodes/<name>`, a leased value of the state store: its
 * instance). Its liveness is then etcd's as well as each coordinator's own
 * connection to it, so a node whose loss no live coordinator saw — one that
 * joined only the coordinator that died with it — is known lost as soon as
 * its lease is gone, not after the rejoin timeout.
 *
 * The elected coordinator acts on a registration that disappears (the lease
 * expired or was revoked):
 * - a node connected to it that announced a lease (NodeEntry.etcdLease) is
 *   lost now, as if its connection had closed (its primaries fail over, its
 *   copies leave the in-sync set), and its connection is closed: the node
 *   redials and comes back as a replica. etcd's word wins over a live
 *   connection, so that whichever coordinator is elected next — which sees
 *   no registration — agrees with this one;
 * - a node not connected to it that the cluster state records as keeping a
 *   lease (NodeRecord.etcdLease) and that still waits for its rejoin timeout
 *   is lost now (`gone`).
 * And when it takes over, such a node with no registration is lost at once
 * (`goneNodes`). A node that never announced a lease keeps connection-based
 * liveness only.
 */
import type { LeaseEvent, LeasedValue, StateStore } from '../state/store.js';
import type { NodeDirectory } from './nodes.js';

/** Leased key of a node's registration, before its name. */
export const NODE_REGISTRATION_PREFIX = 'nodes/';

/** The leased value a node registers under its lease. */
export interface NodeRegistration {
  /** See NodeEntry.instance. */
  instance: string;
  host: string;
  pid: number;
}

export function nodeRegistrationKey(name: string): string {
  return `${NODE_REGISTRATION_PREFIX}${name}`;
}

export interface NodeLeasesOptions {
  store: StateStore<unknown>;
  nodes: NodeDirectory;
  decides: () => boolean;
  /** Whether the cluster state records that the node keeps an etcd lease. */
  recordedLeased: (name: string) => boolean;
  /** A node not connected here whose registration ended: lost from now on (reallocation.ts `gone`). */
  gone: (name: string) => void;
  log: { warn(b: Record<string, unknown>, m: string): void };
}

/** Follows the nodes' registrations for as long as the store lives. */
export class NodeLeases {
  /** The instance each registration named, by node: the one that ends is the connected node's, or another process's that took its name. */
  private readonly instances = new Map<string, string | undefined>();

  constructor(private readonly options: NodeLeasesOptions) {
    for (const entry of options.store.listLeased(NODE_REGISTRATION_PREFIX)) this.instances.set(entry.key.slice(NODE_REGISTRATION_PREFIX.length), instanceOf(entry.value));
    options.store.watchLeases((event) => this.leaseEvent(event));
  }

  /** Whether the node holds a live registration in etcd. */
  registered(name: string): boolean {
    return this.options.store.getLeased(nodeRegistrationKey(name)) !== undefined;
  }

  /**
   * Of `names` (the cluster state's nodes), those not connected here that
   * keep an etcd lease by the cluster state and hold no registration: lost
   * now, with the time they are found so.
   */
  goneNodes(names: readonly string[]): Map<string, number> {
    const now = Date.now();
    const gone = new Map<string, number>();
    for (const name of names) {
      if (!this.options.nodes.isActive(name) && this.options.recordedLeased(name) && !this.registered(name)) gone.set(name, now);
    }
    return gone;
  }

  private leaseEvent(event: LeaseEvent): void {
    if (event.type === 'ended' || !event.key.startsWith(NODE_REGISTRATION_PREFIX)) return;
    const { nodes, log } = this.options;
    const name = event.key.slice(NODE_REGISTRATION_PREFIX.length);
    if (event.type === 'put') {
      this.instances.set(name, instanceOf(event.value));
      return;
    }
    const instance = this.instances.get(name);
    this.instances.delete(name);
    // Registered again meanwhile (a new lease), or not this coordinator's decision.
    if (!this.options.decides() || this.registered(name)) return;
    const entry = nodes.get(name);
    if (nodes.isActive(name)) {
      // A node that keeps no lease, or a registration of another process than the one connected (refused for taking its name).
      if (entry?.etcdLease !== true || (instance !== undefined && entry.instance !== undefined && instance !== entry.instance)) return;
      const reason = `its etcd lease ended (${event.cause})`;
      log.warn({ node: name, cause: event.cause }, 'node\'s etcd lease ended while connected: it is lost, and its connection closed');
      nodes.leave(name, entry.client, reason);
      void entry.client.close();
      return;
    }
    if (this.options.recordedLeased(name)) this.options.gone(name);
  }
}

function instanceOf(value: LeasedValue): string | undefined {
  const instance = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, LeasedValue>).instance : undefined;
  return typeof instance === 'string' ? instance : undefined;
}
