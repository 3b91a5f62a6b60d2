/**
 * Re-allocation of a lost node's shard copies (docs/cluster.md
 * "Re-allocation"), the counterpart of Elasticsearch's
 * `index.unassigned.node_left.delayed_timeout`:
 *
 * - A node lost for `nodeLeftDelayMs` loses its copies: each goes to an
 *   active node holding no copy of that shard (the one holding the fewest
 *   copies, then by name), which recovers from the primary like any copy
 *   out of sync. The old copy becomes a pending drop of its node, deleted
 *   when it rejoins. A copy with no eligible node, or whose lost node still
 *   holds the primary (no copy in sync could take over), waits: retried
 *   when a node joins and every `RETRY_MS`, logged when what waits changes.
 * - A restarted coordinator gives the nodes of its cluster state
 *   `rejoinTimeoutMs` to rejoin; one that does not is lost from then on
 *   (its primaries fail over, as after a live loss), and its delay counts
 *   from the loss recorded in the cluster state, if any. A coordinator
 *   elected after another's loss does the same, except for the nodes it or
 *   another coordinator saw lost, or whose etcd lease is gone
 *   (cluster/node-leases.ts): those are lost at once, as is a node still
 *   given the rejoin timeout once its etcd lease ends (`gone`).
 *
 * The time of each loss is persisted (`NodeRecord.lostAt`), so the delay
 * survives a coordinator restart; so do the new allocation and the pending
 * drops, which the registry writes in one step.
 */
import type { NodeDirectory } from '../cluster/nodes.js';
import type { IndexMeta } from '../state/cluster-state.js';
import type { Placement } from './placement.js';
import type { ReplicationLog } from './options.js';

/** Copies that could not move (no eligible node, a failed call) are tried again this often, and whenever a node joins. */
const RETRY_MS = 10_000;

export interface ReallocationOptions {
  nodeLeftDelayMs: number;
  rejoinTimeoutMs: number;
  /** See ReplicationOptions.decides. */
  decides: () => boolean;
  log: ReplicationLog;
}

/** What the reallocator needs of the index registry. */
export interface ReallocationHost {
  list(): IndexMeta[];
  /** Every node the cluster state names. */
  knownNodes(): string[];
  /** Date.now() of the node's loss as recorded in the cluster state. */
  lostSince(node: string): number | undefined;
  /** Record (or, with undefined, forget) the node's loss in the cluster state. */
  recordNodeLoss(node: string, lostAt: number | undefined): Promise<void>;
  settled(): Promise<void>;
}

export type CopyReplacement =
  | { status: 'replaced'; node: string; term: number }
  /** The lost node still holds the shard's primary. */
  | { status: 'primary' }
  /** No active node is free of a copy of the shard. */
  | { status: 'no-node' }
  /** Nothing to do any more (the node is back, the copy or the index gone). */
  | { status: 'unchanged' };

/** What the reallocator needs of the replicator. */
export interface ReallocationReplicator {
  /** Fail over the shards whose primary `node` holds, and take its copies out of the in-sync set (a live loss). */
  nodeLost(node: string): void;
  /** Replace `lost`'s copy of the shard with one on the node `choose` names (in the shard's serial queue). */
  replaceCopy(meta: IndexMeta, shard: number, lost: string, choose: (current: Placement) => string | undefined): Promise<CopyReplacement>;
}

interface WaitingCopy {
  index: string;
  shard: number;
  why: string;
}

export class Reallocator {
  /** Per lost node: the timer of its next step. */
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Per lost node whose copies wait: what waits, as last logged. */
  private readonly waiting = new Map<string, string>();
  /** Nodes of the cluster state given the rejoin timeout by `takeOver`, until they rejoin or are counted lost. */
  private readonly awaitingRejoin = new Set<string>();
  /** Nodes whose copies are being moved now, and those to go over again once that ends. */
  private readonly running = new Set<string>();
  private readonly rerun = new Set<string>();
  private closed = false;

  constructor(
    private readonly host: ReallocationHost,
    private readonly nodes: NodeDirectory,
    private readonly replicator: ReallocationReplicator,
    private readonly options: ReallocationOptions,
  ) {
    nodes.on('nodeLost', (entry) => this.lost(entry.name));
    nodes.on('nodeJoined', (entry) => this.joined(entry.name));
    if (options.decides()) this.takeOver();
  }

  /**
   * A coordinator starting to decide (restarted, or elected). A node of its
   * cluster state that it saw lost (connected to it, then lost: nodes join
   * every coordinator), or that another coordinator saw lost or whose etcd
   * lease is gone (`lostElsewhere`: name → Date.now() of the loss), is lost now, as if the
   * loss happened while this one decided — not after a rejoin timeout
   * counted from the election, which would add to the election's own wait.
   * The others get rejoinTimeoutMs to come back.
   */
  takeOver(lostElsewhere: ReadonlyMap<string, number> = new Map()): void {
    const deadline = Date.now() + this.options.rejoinTimeoutMs;
    for (const name of this.host.knownNodes()) {
      if (this.nodes.isActive(name)) continue;
      const lostAt = this.nodes.lostSince(name) ?? lostElsewhere.get(name);
      if (lostAt === undefined) {
        this.awaitingRejoin.add(name);
        this.at(name, deadline, () => this.absent(name));
      } else {
        this.absent(name, lostAt);
      }
    }
  }

  /**
   * A node still given the rejoin timeout is known gone (its etcd lease
   * ended: cluster/node-leases.ts): lost now, as one seen lost.
   */
  gone(name: string): void {
    if (this.awaitingRejoin.has(name)) this.absent(name, Date.now());
  }

  /** Stop every timer (shutdown). */
  close(): void {
    this.closed = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  /** A node lost while connected: its copies move after the delay. */
  private lost(name: string): void {
    if (this.closed || !this.options.decides() || !this.holdsCopies(name)) return;
    const lostAt = Date.now();
    this.host.recordNodeLoss(name, lostAt).catch((err: unknown) =>
      this.options.log.error({ node: name, err: describe(err) }, 'could not record the node loss in the cluster state'));
    this.at(name, lostAt + this.options.nodeLeftDelayMs, () => this.reallocate(name));
  }

  private joined(name: string): void {
    this.awaitingRejoin.delete(name);
    if (this.closed || !this.options.decides()) return;
    const timer = this.timers.get(name);
    if (timer !== undefined) clearTimeout(timer);
    this.timers.delete(name);
    this.waiting.delete(name);
    // Queued even when nothing is recorded yet: a loss being recorded now (a restart seen as loss + join) is cleared after it.
    this.host.recordNodeLoss(name, undefined).catch((err: unknown) =>
      this.options.log.error({ node: name, err: describe(err) }, 'could not clear the node loss in the cluster state'));
    // A node joining may be where waiting copies can go; after the registry handled the join (pending drops first).
    if (this.waiting.size === 0) return;
    void this.host.settled().then(() => {
      for (const waiting of [...this.waiting.keys()]) void this.reallocate(waiting);
    });
  }

  /**
   * A node of the cluster state absent when this coordinator began deciding
   * is lost from now on: one seen lost (by it or by another coordinator) at
   * `seenLostAt` at once, any other once the rejoin timeout passed.
   */
  private absent(name: string, seenLostAt?: number): void {
    this.awaitingRejoin.delete(name);
    if (!this.options.decides() || this.nodes.isActive(name) || !this.holdsCopies(name)) return;
    const recorded = this.host.lostSince(name);
    const lostAt = recorded === undefined ? undefined : new Date(recorded).toISOString();
    if (seenLostAt === undefined) {
      this.options.log.warn({ node: name, rejoinTimeoutMs: this.options.rejoinTimeoutMs, lostAt }, 'node did not rejoin the restarted coordinator; it is lost');
    } else {
      this.options.log.warn({ node: name, lostForMs: Date.now() - seenLostAt, lostAt }, 'node seen lost before this coordinator began deciding; it is lost');
    }
    this.replicator.nodeLost(name);
    const since = recorded ?? seenLostAt ?? Date.now();
    if (recorded === undefined) {
      this.host.recordNodeLoss(name, since).catch((err: unknown) =>
        this.options.log.error({ node: name, err: describe(err) }, 'could not record the node loss in the cluster state'));
    }
    this.at(name, since + this.options.nodeLeftDelayMs, () => this.reallocate(name));
  }

  /** Move every copy of the lost node that can move now (one pass at a time per node); what cannot waits. */
  private async reallocate(name: string): Promise<void> {
    if (this.running.has(name)) {
      this.rerun.add(name);
      return;
    }
    this.running.add(name);
    try {
      await this.moveCopies(name);
    } finally {
      this.running.delete(name);
    }
    if (this.rerun.delete(name)) await this.reallocate(name);
  }

  private async moveCopies(name: string): Promise<void> {
    const timer = this.timers.get(name);
    if (timer !== undefined) clearTimeout(timer);
    this.timers.delete(name);
    if (this.closed || !this.options.decides() || this.nodes.isActive(name)) return;
    const waiting: WaitingCopy[] = [];
    for (const meta of this.host.list()) {
      for (let shard = 1; shard <= meta.allocation.length; shard++) {
        if (!(meta.allocation[shard - 1] ?? []).includes(name)) continue;
        let outcome: CopyReplacement;
        try {
          outcome = await this.replicator.replaceCopy(meta, shard, name, (current) => this.choose(current));
        } catch (err) {
          waiting.push({ index: meta.path, shard, why: 'failed' });
          this.options.log.error({ index: meta.path, shard, lost: name, err: describe(err) }, 'shard copy re-allocation failed; retrying');
          continue;
        }
        if (this.closed) return;
        if (outcome.status === 'replaced') {
          const lostAt = this.host.lostSince(name);
          this.options.log.warn({ index: meta.path, shard, lost: name, node: outcome.node, term: outcome.term,
            lostForMs: lostAt === undefined ? undefined : Date.now() - lostAt }, 'shard copy re-allocated off a lost node');
        } else if (outcome.status === 'primary') {
          waiting.push({ index: meta.path, shard, why: 'the lost node holds the primary: no copy in sync to promote' });
        } else if (outcome.status === 'no-node') {
          waiting.push({ index: meta.path, shard, why: 'no active node without a copy of the shard' });
        }
      }
    }
    if (this.nodes.isActive(name)) return;
    if (waiting.length === 0) {
      this.waiting.delete(name);
      return;
    }
    const summary = JSON.stringify(waiting);
    if (this.waiting.get(name) !== summary) {
      this.options.log.warn({ node: name, copies: waiting }, 'shard copies of a lost node wait to be re-allocated');
      this.waiting.set(name, summary);
    }
    this.at(name, Date.now() + RETRY_MS, () => this.reallocate(name));
  }

  /** An active node holding no copy of the shard: the one holding the fewest copies overall, then by name. */
  private choose(current: Placement): string | undefined {
    const eligible = this.nodes.activeNames().filter((node) => !current.copies.includes(node));
    if (eligible.length <= 1) return eligible[0];
    const held = new Map<string, number>();
    for (const meta of this.host.list()) for (const copies of meta.allocation) for (const node of copies) held.set(node, (held.get(node) ?? 0) + 1);
    let best = eligible[0] as string;
    for (const node of eligible) if ((held.get(node) ?? 0) < (held.get(best) ?? 0)) best = node;
    return best;
  }

  private holdsCopies(name: string): boolean {
    return this.host.list().some((meta) => meta.allocation.some((copies) => copies.includes(name)));
  }

  private at(name: string, when: number, step: () => void | Promise<void>): void {
    if (this.closed) return;
    const previous = this.timers.get(name);
    if (previous !== undefined) clearTimeout(previous);
    const timer = setTimeout(() => {
      if (this.timers.get(name) === timer) this.timers.delete(name);
      void step();
    }, Math.max(0, when - Date.now()));
    // The coordinator's servers keep the process alive; these timers alone do not.
    timer.unref();
    this.timers.set(name, timer);
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
