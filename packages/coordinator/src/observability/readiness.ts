/**
 * Readiness (`GET /readyz`): the coordinator is ready when some shard node
 * is active, every shard copy the cluster state allocates to an active node
 * has been opened since the node joined (opening a copy replays its
 * operation log into the search index: until then its searches would be
 * slow to start and its figures incomplete), and it is not shutting down.
 * Otherwise the answer is 503 with the reason.
 *
 * Copies are opened here, eagerly, when the coordinator starts and when a
 * node joins, a few at a time per node. A copy that fails to open keeps the
 * coordinator not ready, with the error as the reason; it is tried again
 * when readiness is asked, at most every RETRY_MS.
 *
 * Once ready by those measures, `check` also asks the nodes whether a shard
 * copy's segment flush keeps failing (a full or broken disk under the index):
 * such a copy makes the coordinator not ready, with the failure as the reason.
 */
import type { ShardRef } from '@tessera/rpc';
import type { Logger } from 'pino';
import type { NodeDirectory } from '../cluster/nodes.js';

export interface ReadinessSources {
  /** Shard copies the cluster state allocates to `node`. */
  copiesOn(node: string): ShardRef[];
  /** Open one copy on its node (shard.open). */
  open(node: string, copy: ShardRef): Promise<unknown>;
  /**
   * The first shard copy, on any active node, whose segment flush keeps failing, as a reason; undefined when none
   * (asked of the nodes by `check`, each time: a flush that recovers makes the coordinator ready again at once).
   */
  flushFailure?(): Promise<string | undefined>;
  /** A reason this coordinator cannot serve whatever the nodes say (several coordinators: no lease, no leader). */
  blocker?(): string | undefined;
}

export type ReadinessState = { ready: true } | { ready: false; reason: string };

/** Copies opened at once per node: each open reads its LevelDB and replays its op log. */
const OPENS_PER_NODE_MAX = 4;
/** A copy that failed to open is tried again no sooner than this after its last attempt. */
const RETRY_MS = 5_000;

interface NodeOpening {
  /** Bumped when the node (re)joins or leaves: opens of an older generation are ignored. */
  generation: number;
  total: number;
  done: number;
  /** Copies that failed, by `shard/index/`, with the error. */
  failed: Map<string, { copy: ShardRef; message: string; atMs: number }>;
  retrying: boolean;
}

export class Readiness {
  private shuttingDown = false;
  private readonly opening = new Map<string, NodeOpening>();

  private readonly retryMs: number;
  private readonly now: () => number;

  constructor(
    private readonly nodes: NodeDirectory,
    private readonly sources: ReadinessSources,
    private readonly log: Logger,
    options: { retryMs?: number; now?: () => number } = {},
  ) {
    this.retryMs = options.retryMs ?? RETRY_MS;
    this.now = options.now ?? Date.now;
  }

  /** Open the copies of every active node now, and of each node when it joins. */
  start(): void {
    for (const name of this.nodes.activeNames()) this.openNode(name);
    this.nodes.on('nodeJoined', (entry) => this.openNode(entry.name));
    this.nodes.on('nodeLost', (entry) => this.opening.delete(entry.name));
  }

  /** Shutdown began: not ready from now on. */
  beginShutdown(): void {
    this.shuttingDown = true;
  }

  state(): ReadinessState {
    if (this.shuttingDown) return { ready: false, reason: 'shutting down' };
    const active = this.nodes.activeNames();
    if (active.length === 0) return { ready: false, reason: 'no shard node is active' };
    let total = 0;
    let done = 0;
    let failure: string | undefined;
    for (const name of active) {
      const node = this.opening.get(name);
      if (node === undefined) continue;
      if (node.failed.size > 0) this.retryFailed(name, node);
      total += node.total;
      done += node.done;
      const [first] = node.failed.values();
      if (failure === undefined && first !== undefined) {
        failure = `shard copy ${first.copy.index} #${first.copy.shard} on node ${name} could not be opened: ${first.message}`;
      }
    }
    if (done < total) return { ready: false, reason: `opening shard copies (replaying their operation logs): ${done} of ${total} open` };
    if (failure !== undefined) return { ready: false, reason: failure };
    return { ready: true };
  }

  /**
   * `state`, and once that is ready, whether every shard copy can still flush its write buffer into segments: one
   * that cannot holds its changes in memory only and keeps its whole operation log, so it is not fit for traffic.
   */
  async check(): Promise<ReadinessState> {
    const blocked = this.sources.blocker?.();
    if (blocked !== undefined) return { ready: false, reason: blocked };
    const state = this.state();
    if (!state.ready || this.sources.flushFailure === undefined) return state;
    const reason = await this.sources.flushFailure().catch(() => undefined);
    return reason === undefined ? state : { ready: false, reason };
  }

  private openNode(name: string): void {
    const previous = this.opening.get(name);
    const copies = this.sources.copiesOn(name);
    const node: NodeOpening = { generation: (previous?.generation ?? 0) + 1, total: copies.length, done: 0, failed: new Map(), retrying: false };
    this.opening.set(name, node);
    const startedMs = performance.now();
    void this.openAll(name, node, copies).then(() => {
      if (this.opening.get(name) !== node || copies.length === 0) return;
      this.log.info({ node: name, copies: copies.length, failed: node.failed.size, ms: Math.round(performance.now() - startedMs) }, 'shard copies open');
    });
  }

  /** Open `copies` a few at a time; each success or failure is counted in `node` while it is current. */
  private async openAll(name: string, node: NodeOpening, copies: ShardRef[]): Promise<void> {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < copies.length) {
        const copy = copies[next++] as ShardRef;
        try {
          await this.sources.open(name, copy);
          node.failed.delete(copyKey(copy));
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          node.failed.set(copyKey(copy), { copy, message, atMs: this.now() });
          if (this.opening.get(name) === node) this.log.error({ err, node: name, index: copy.index, shard: copy.shard }, 'could not open a shard copy');
        }
        node.done++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(OPENS_PER_NODE_MAX, copies.length) }, worker));
  }

  /** Try failed copies again (in the background) once RETRY_MS passed; copies no longer allocated to the node are forgotten. */
  private retryFailed(name: string, node: NodeOpening): void {
    if (node.retrying) return;
    const allocated = new Set(this.sources.copiesOn(name).map(copyKey));
    const now = this.now();
    const due: ShardRef[] = [];
    for (const [key, failure] of node.failed) {
      if (!allocated.has(key)) node.failed.delete(key);
      else if (now - failure.atMs >= this.retryMs) due.push(failure.copy);
    }
    if (due.length === 0) return;
    node.retrying = true;
    node.total += due.length;
    void this.openAll(name, node, due).finally(() => {
      node.retrying = false;
    });
  }
}

function copyKey(copy: ShardRef): string {
  return `${copy.shard}${copy.index}`;
}
