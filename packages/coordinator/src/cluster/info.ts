/**
 * Cluster information: `GET /` (API.md §12.1) and `GET /.nodes` (§12.2) —
 * the coordinator, every known node (active or not, with its last-known
 * facts), the shard copies allocated to each, and unassigned copies.
 */
import { cpus } from 'node:os';
import type { IndexRegistry } from '../indexes/registry.js';
import type { Replicator } from '../replication/replicator.js';
import type { NodeDirectory, NodeStatus } from './nodes.js';
import type { CoordinatorGroup } from './coordinator-group.js';
import type { NodeLeases } from './node-leases.js';

export interface ClusterIdentity {
  name: string;
  clusterName: string;
  version: string;
  /** Versions of the libraries that matter to operators. */
  libraries: Record<string, string>;
}

/** Where the coordinator's HTTP API listens (known once it listens). */
export interface HttpEndpoint {
  host: string;
  httpPort: number;
}

/**
 * A node's own report (sequence numbers, documents) is asked for on every
 * GET / and /.nodes; a node that does not answer within this is shown with
 * its last report rather than holding the answer up.
 */
const NODE_INFO_TIMEOUT_MS = 2000;

interface CopyReport {
  seq: number;
  documents: number;
  /** A replica's position in its primary's numbering. */
  checkpoint?: number;
}

export class ClusterInfo {
  private endpoint: HttpEndpoint | undefined;
  /** Last report per node name (bounded by the known nodes). */
  private readonly reports = new Map<string, Map<string, CopyReport>>();

  constructor(
    private readonly identity: ClusterIdentity,
    private readonly nodes: NodeDirectory,
    private readonly registry: IndexRegistry,
    private readonly replication: Replicator,
    private readonly defaults: { number_of_shards: number; number_of_replicas: number },
    /** Several coordinators (cluster/coordinator-group.ts): each registered one, instead of this one alone. */
    private readonly group?: CoordinatorGroup,
    /** The nodes' own etcd leases, on etcd (cluster/node-leases.ts). */
    private readonly nodeLeases?: NodeLeases,
  ) {}

  /** Tell where the HTTP API listens, for the coordinator's own entry. */
  advertise(endpoint: HttpEndpoint): void {
    this.endpoint = endpoint;
  }

  async root(): Promise<Record<string, unknown>> {
    const nodes = await this.nodeList();
    const allocation = this.allocationSummary();
    return {
      name: this.identity.name,
      cluster_name: this.identity.clusterName,
      server: `Tessera v${this.identity.version}`,
      versions: { Tessera: this.identity.version, 'Node.js': process.version, ...this.identity.libraries },
      options: {
        processors: cpus().length,
        thread_pools: { num_shards: this.defaults.number_of_shards, num_replicas: this.defaults.number_of_replicas },
      },
      nodes,
      shards: allocation.summary,
      // READY: some node is active and every shard's primary is on an active node.
      state: this.nodes.activeNames().length > 0 && allocation.primariesReachable ? 'READY' : 'WAITING',
    };
  }

  async nodeList(): Promise<Array<Record<string, unknown>>> {
    const statuses = this.nodes.all();
    await Promise.all(statuses.filter((s) => s.active).map((s) => this.refreshReport(s)));
    const now = Date.now();
    const list = statuses.map((status) => this.describeNode(status, now));
    if (this.group !== undefined) list.unshift(...this.groupEntries(this.group));
    else if (!statuses.some((s) => s.entry?.local === true)) list.unshift(this.coordinatorEntry());
    return list;
  }

  /** Every registered coordinator, the elected one marked `leader`, this one `local`. */
  private groupEntries(group: CoordinatorGroup): Array<Record<string, unknown>> {
    const leader = group.leader()?.name;
    return group.members().map((member) => {
      const entry: Record<string, unknown> = { name: member.name, active: true, leader: member.name === leader, local: member.name === group.name };
      if (member.http !== undefined) {
        const url = new URL(member.http);
        Object.assign(entry, { host: url.hostname, http_port: Number(url.port) });
      }
      if (member.rpc !== undefined) entry.rpc = member.rpc;
      entry.started_at = member.startedAt;
      entry.role = 'coordinator';
      entry.shards = [];
      return entry;
    });
  }

  /** The coordinator itself, when it hosts no shard node (`tessera coordinator`). */
  private coordinatorEntry(): Record<string, unknown> {
    const entry: Record<string, unknown> = { name: this.identity.name, active: true, leader: true, local: true };
    if (this.endpoint !== undefined) Object.assign(entry, { host: this.endpoint.host, http_port: this.endpoint.httpPort });
    entry.role = 'coordinator';
    entry.shards = [];
    return entry;
  }

  private describeNode(status: NodeStatus, now: number): Record<string, unknown> {
    const entry = status.entry;
    const out: Record<string, unknown> = { name: status.name, active: status.active };
    if (entry !== undefined) {
      out.leader = entry.local;
      out.local = entry.local;
      const endpoint = entry.local ? this.endpoint : undefined;
      out.host = endpoint?.host ?? entry.host;
      const httpPort = endpoint?.httpPort ?? entry.httpPort;
      if (httpPort !== undefined) out.http_port = httpPort;
      out.role = entry.role;
      if (entry.dataDir !== undefined) out.data = entry.dataDir;
      if (entry.pid !== undefined) out.pid = entry.pid;
    }
    // A node keeping an etcd lease (as it announced, or as the cluster state records it when it has not joined here): whether it is registered.
    const leased = entry !== undefined ? entry.etcdLease === true : this.registry.snapshot().nodes?.[status.name]?.etcdLease === true;
    if (this.nodeLeases !== undefined && leased) out.etcd_lease = this.nodeLeases.registered(status.name);
    if (status.active) {
      const heard = entry?.lastHeardAt?.();
      if (heard !== undefined) out.heartbeat_age_ms = Math.max(0, now - heard);
      out.joined_age_ms = now - status.sinceMs;
    } else {
      out.inactive_age_ms = now - status.sinceMs;
      if (status.reason !== undefined) out.reason = status.reason;
    }
    out.shards = this.copiesOn(status.name);
    return out;
  }

  /** The copies allocated to a node, with the node's last-reported figures. */
  private copiesOn(node: string): Array<Record<string, unknown>> {
    const reported = this.reports.get(node);
    const shards: Array<Record<string, unknown>> = [];
    for (const meta of this.registry.list()) {
      meta.allocation.forEach((copies, i) => {
        const position = copies.indexOf(node);
        if (position < 0) return;
        const shard = i + 1;
        const state = this.replication.copyState(meta.path, shard, node);
        const report = reported?.get(copyKey(meta.path, shard));
        const copy: Record<string, unknown> = {
          index: meta.path,
          shard,
          primary: position === 0,
          // A replica's own report: its checkpoint, in its primary's numbering (what the replicator would show).
          seq: state.seq ?? (position === 0 ? report?.seq : report?.checkpoint ?? report?.seq) ?? 0,
          in_sync: state.inSync,
        };
        if (report !== undefined) copy.documents = report.documents;
        shards.push(copy);
      });
    }
    return shards;
  }

  private async refreshReport(status: NodeStatus): Promise<void> {
    const client = status.entry?.client;
    if (client === undefined) return;
    const info = await client.call('node.info', {}, { timeoutMs: NODE_INFO_TIMEOUT_MS }).catch(() => undefined);
    if (info === undefined) return;
    this.reports.set(status.name, new Map(info.shards.map((s) => [copyKey(s.index, s.shard), { seq: s.seq, documents: s.documents, checkpoint: s.checkpoint }])));
  }

  /**
   * Copies the indexes ask for against those placed: a replica missing for
   * lack of nodes is unassigned (listed), a copy on an inactive node is counted.
   */
  private allocationSummary(): { summary: Record<string, unknown>; primariesReachable: boolean } {
    let copies = 0;
    let assigned = 0;
    let active = 0;
    let primariesReachable = true;
    const unassigned: Array<Record<string, unknown>> = [];
    for (const meta of this.registry.list()) {
      const wanted = 1 + meta.settings.number_of_replicas;
      meta.allocation.forEach((nodes, i) => {
        copies += wanted;
        assigned += Math.min(nodes.length, wanted);
        active += nodes.filter((n) => this.nodes.isActive(n)).length;
        const primary = nodes[0];
        if (primary === undefined || !this.nodes.isActive(primary)) primariesReachable = false;
        if (nodes.length < wanted) unassigned.push({ index: meta.path, shard: i + 1, missing: wanted - nodes.length });
      });
    }
    return {
      summary: { copies, assigned, active, unassigned_count: copies - assigned, unassigned },
      primariesReachable,
    };
  }
}

function copyKey(index: string, shard: number): string {
  return `${shard}${index}`;
}
