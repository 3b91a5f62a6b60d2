/**
 * A cluster in one process for replication tests: shard nodes reached
 * through in-process RPC clients, in a NodeDirectory, with the index
 * registry (and its replicator) over a cluster state in a temporary
 * directory. A node can be killed (its calls fail from then on), paused
 * (calls hang, as under SIGSTOP, until resumed) and restarted on its data
 * directory; losing a node is announced as the heartbeat would. The
 * coordinator side (directory, registry, replicator) can be restarted over
 * the same cluster-state file, with some nodes not rejoining.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  EMPTY_CLUSTER_STATE, IndexRegistry, LocalStateStore, NodeDirectory, Replicator, type ClusterState, type IndexMeta, type Placement, type ReplicationOptions,
} from '@tessera/coordinator';
import { ShardNode, type ShardNodeOptions } from '@tessera/node';
import { InProcessClient, type RpcClient, type ShardStatsReply, type WriteCall, type WriteReply } from '@tessera/rpc';

export interface LoggedLine {
  level: 'info' | 'warn' | 'error';
  msg: string;
  [key: string]: unknown;
}

/**
 * What the WebSocket and MessagePort transports do: params reach the node as
 * a copy (a clone here), so the coordinator's calls name their schema once
 * the node holds it (coordinator `schema-references.ts`), as in a cluster.
 */
class CopyingClient extends InProcessClient {
  override readonly passesByReference = false;
}

interface Member {
  node: ShardNode;
  client: InProcessClient;
  /** Calls wait on this while the node is paused. */
  paused: Promise<void> | undefined;
  resume: () => void;
}

export class InProcessCluster {
  /** Replaced, with the registry, when the coordinator restarts. */
  nodes = new NodeDirectory();
  readonly logs: LoggedLine[] = [];
  registry: IndexRegistry;
  /** The coordinator's replicator over `registry` (replaced with it). */
  replication: Replicator;
  private readonly members = new Map<string, Member>();

  private constructor(readonly dir: string, store: LocalStateStore<ClusterState>, private readonly nodeOptions: Partial<ShardNodeOptions>,
    private readonly replicationOptions: Partial<ReplicationOptions>) {
    ({ registry: this.registry, replication: this.replication } = this.coordinate(store, replicationOptions));
  }

  static async start(names: string[], options: { node?: Partial<ShardNodeOptions>; replication?: Partial<ReplicationOptions> } = {}): Promise<InProcessCluster> {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-replication-'));
    const store = await LocalStateStore.open<ClusterState>(join(dir, 'cluster-state.json'), EMPTY_CLUSTER_STATE);
    const cluster = new InProcessCluster(dir, store, options.node ?? {}, options.replication ?? {});
    for (const name of names) cluster.startNode(name);
    return cluster;
  }

  get stateFile(): string {
    return join(this.dir, 'cluster-state.json');
  }

  /**
   * The coordinator restarts: a new node directory and registry over the
   * cluster-state file; the nodes still running rejoin it, except `absent`,
   * which stop (their data stays) and never rejoin unless started again.
   */
  async restartCoordinator(options: { absent?: string[]; replication?: Partial<ReplicationOptions> } = {}): Promise<void> {
    await this.registry.settled();
    this.replication.close();
    for (const name of options.absent ?? []) {
      const member = this.member(name);
      await member.client.close();
      await member.node.close();
    }
    const store = await LocalStateStore.open<ClusterState>(this.stateFile, EMPTY_CLUSTER_STATE);
    this.nodes = new NodeDirectory();
    ({ registry: this.registry, replication: this.replication } = this.coordinate(store, { ...this.replicationOptions, ...options.replication }));
    for (const [name, member] of this.members) {
      if (member.client.closed) continue;
      const outcome = this.nodes.join({ name, client: member.client, host: '127.0.0.1', role: 'shard', local: false, instance: `${name}-rejoined` });
      if (!outcome.joined) throw new Error(outcome.reason);
    }
  }

  /** Start (or restart on its data directory) a node, and join it. */
  startNode(name: string): ShardNode {
    if (this.members.get(name)?.client.closed === false) throw new Error(`${name} is running`);
    const node = new ShardNode({ name, dataDir: join(this.dir, name), ...this.nodeOptions });
    const member: Member = {
      node,
      client: new CopyingClient(async (method, params) => {
        while (member.paused !== undefined) await member.paused;
        return node.handle(method, structuredClone(params));
      }, { callTimeoutMs: 10_000 }),
      paused: undefined,
      resume: () => undefined,
    };
    this.members.set(name, member);
    const outcome = this.nodes.join({ name, client: member.client, host: '127.0.0.1', role: 'shard', local: false, instance: `${name}-${Date.now()}` });
    if (!outcome.joined) throw new Error(outcome.reason);
    return node;
  }

  /** The node's process dies: the connection closes (calls fail), the coordinator sees it lost, its shard copies close. */
  async kill(name: string): Promise<void> {
    const member = this.member(name);
    await member.client.close();
    this.nodes.leave(name, member.client, 'killed by the test');
    member.resume();
    await member.node.close();
  }

  /** Calls to the node hang from now on (SIGSTOP). */
  pause(name: string): void {
    const member = this.member(name);
    if (member.paused !== undefined) return;
    member.paused = new Promise((resolve) => {
      member.resume = () => {
        member.paused = undefined;
        resolve();
      };
    });
  }

  /** SIGCONT: the calls that waited run now. */
  resume(name: string): void {
    this.member(name).resume();
  }

  /** The heartbeat gave up on the node: it is lost (its connection closed), whatever it is doing. */
  async declareLost(name: string): Promise<void> {
    const member = this.member(name);
    await member.client.close();
    this.nodes.leave(name, member.client, 'heartbeat lost (test)');
  }

  /** Straight to the node, bypassing the coordinator (what it holds, or a call from a demoted coordinator's era). */
  direct(name: string): RpcClient {
    const node = this.member(name).node;
    return new InProcessClient(node.handle);
  }

  meta(index: string): IndexMeta {
    const meta = this.registry.get(index);
    if (meta === undefined) throw new Error(`no index ${index}`);
    return meta;
  }

  placement(index: string, shard = 1): Placement {
    return this.registry.placement(this.meta(index), shard);
  }

  async createIndex(index: string, settings: { number_of_shards?: number; number_of_replicas?: number } = {}): Promise<IndexMeta> {
    return this.registry.ensure(index, { settings, idType: 'keyword' });
  }

  write(index: string, call: Omit<WriteCall, 'index' | 'shard'>, shard = 1): Promise<WriteReply> {
    const meta = this.meta(index);
    return this.replication.write(meta, shard, { index, shard, schema: meta.schema, ...call });
  }

  /** `(id, _version)` of every document of a copy, sorted by ID. */
  async versions(node: string, index: string, shard = 1): Promise<Array<[string | number, number]>> {
    const out: Array<[string | number, number]> = [];
    const client = this.direct(node);
    let after: string | number | undefined;
    for (;;) {
      const page = await client.call('shard.scan',
        { index, shard, limit: 1000, ...(after === undefined ? {} : { after }) });
      for (const d of page.documents) out.push([d.id, d.version]);
      if (page.done || page.documents.length === 0) return out;
      after = page.documents[page.documents.length - 1]?.id;
    }
  }

  stats(node: string, index: string, shard = 1): Promise<ShardStatsReply> {
    return this.direct(node).call('shard.stats', { index, shard });
  }

  /** Until `check` holds (polled), or fail after `timeoutMs`. */
  async until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; logs: ${JSON.stringify(this.logs.slice(-10))}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async stop(): Promise<void> {
    this.replication.close();
    for (const member of this.members.values()) {
      member.resume();
      await member.client.close();
      await member.node.close();
    }
    await rm(this.dir, { recursive: true, force: true });
  }

  /** The registry and its replicator over `store` and `this.nodes`, following membership as the coordinator does (coordinator.ts). */
  private coordinate(store: LocalStateStore<ClusterState>, replication: Partial<ReplicationOptions>): { registry: IndexRegistry; replication: Replicator } {
    const logs = this.logs;
    const log = (level: LoggedLine['level']) => (bindings: Record<string, unknown>, msg: string) => { logs.push({ ...bindings, level, msg }); };
    const registry = new IndexRegistry(store, this.nodes, { number_of_shards: 1, number_of_replicas: 1 });
    const replicator = new Replicator(registry, this.nodes,
      { failoverWaitMs: 5_000, relayTimeoutMs: 2_000, recoveryRetryMs: 50, controlTimeoutMs: 2_000, ...replication,
        log: { info: log('info'), warn: log('warn'), error: log('error') } });
    registry.onIndexDropped((uuid) => replicator.forgetIndex(uuid));
    // A joining node is recorded and gets the drops it missed (pending drops).
    this.nodes.on('nodeJoined', (entry) => {
      registry.nodeJoined(entry.name).catch((err: unknown) => logs.push({ level: 'error', msg: 'could not record the node', node: entry.name, err: String(err) }));
    });
    return { registry, replication: replicator };
  }

  private member(name: string): Member {
    const member = this.members.get(name);
    if (member === undefined) throw new Error(`no node ${name}`);
    return member;
  }
}
