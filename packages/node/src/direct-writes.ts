/**
 * Writes a shard's primary takes straight from any coordinator and relays to
 * its replicas itself (rpc `WriteCall.direct`), while the elected
 * coordinator's word allows it (`shard.placement`, docs/cluster.md "Writes
 * through every coordinator"):
 *
 * - The word of the highest cluster-state revision wins: a push delayed on
 *   the wire (from a coordinator since deposed) never replaces a newer one.
 *   Kept in memory only: a restarted node takes no direct write until the
 *   elected coordinator has placed its copies again.
 * - A direct write runs only in the placement's term, and is answered once
 *   every replica of the placement applied it. Relays to one replica leave in
 *   order, one `doc.replicate` in flight at a time (`CopyRelay`), so a
 *   replica's changes arrive in the primary's seq order.
 * - A replica that fails a relay is named in the write's reply
 *   (`relayFailed`): the coordinator takes it out of the in-sync set before
 *   it acknowledges the write. From then on the placement takes no direct
 *   write (a later one could otherwise be acknowledged past a gap in that
 *   replica) until the elected coordinator places the shard again.
 * - A push takes effect for the direct writes admitted after it. One that
 *   ends `direct` is answered once those admitted before it have finished,
 *   their relays included, so the elected coordinator knows that every write
 *   after its answer goes through it. One that adds a replica (a copy
 *   finishing its recovery) is answered once those admitted before it have
 *   run on this copy (their relays may still be on their way): every one of
 *   them is then within the seq the coordinator reads next, and every later
 *   one reaches the new replica. Any other push is answered at once: a write
 *   stuck in a relay to a lost replica (up to RELAY_TIMEOUT_MS) holds up
 *   none of them.
 */
import { CopyRelay, type PlacementCall, type RelayTarget, type ReplicatedChange, type RpcClient, type ShardRef } from '@tessera/rpc';
import { nodeErrors } from './errors.js';

/** How a primary reaches the replicas it relays to (the node process's relay connections). */
export interface RelayPeers {
  /** The client of `target` (dialled on first use); throws when it cannot be reached. */
  client(target: RelayTarget): RpcClient;
}

interface Held {
  term: number;
  revision: number;
  direct: boolean;
  replicas: RelayTarget[];
  /** A relay failed since the placement: no direct write until the next one. */
  failed: boolean;
  /** Pushes taken so far: a direct write runs under the one it was admitted in. */
  generation: number;
  /** Direct writes not yet answered, by the generation they were admitted in. */
  running: Map<number, number>;
  /** Direct writes not yet run on this copy (no seq yet), by generation. */
  writing: Map<number, number>;
  /** Answers of pushes, each waiting for the writes admitted before it (generations below `before`) to have run or finished. */
  waiting: Array<{ before: number; until: 'ran' | 'finished'; answer: () => void }>;
}

/** A direct write admitted: the replicas to relay it to, and the calls that mark its progress. */
export interface Admitted {
  readonly replicas: readonly RelayTarget[];
  /** It ran on this copy (or failed to): its seq is taken. */
  ran(): void;
  /** It was answered (implies `ran`). */
  finished(): void;
}

/** Deadline of one relay: past it the replica counts as failed (the coordinator's own relays use the same). */
export const RELAY_TIMEOUT_MS = 10_000;

export class DirectWrites {
  private readonly held = new Map<string, Held>();
  /** Relay queues by copy key and replica name. */
  private readonly relays = new Map<string, CopyRelay>();

  constructor(private readonly peers: RelayPeers | undefined) {}

  /** A push of the elected coordinator; resolves once it holds (see the header), with the revision held (a newer one kept: not this push's). */
  place(key: string, call: PlacementCall): Promise<number> {
    if (call.direct && call.replicas.length > 0 && this.peers === undefined) {
      throw nodeErrors.badCall('shard.placement', 'this node relays to no replica (it was started without a relay listener)');
    }
    const known = this.held.get(key);
    if (known !== undefined && call.revision < known.revision) return Promise.resolve(known.revision);
    const held: Held = known ?? {
      term: call.term, revision: call.revision, direct: false, replicas: [], failed: false, generation: 0, running: new Map(), writing: new Map(), waiting: [],
    };
    const before = held.replicas.map((r) => r.node);
    held.generation++;
    held.term = call.term;
    held.revision = call.revision;
    held.direct = call.direct;
    held.replicas = call.replicas.map((r) => ({ node: r.node, url: r.url }));
    held.failed = false;
    this.held.set(key, held);
    // Queues of replicas no longer placed go (a replica placed again starts a new one).
    for (const [relayKey] of this.relays) {
      if (relayKey.startsWith(`${key}\u0000`) && !held.replicas.some((r) => relayKey === `${key}\u0000${r.node}`)) this.relays.delete(relayKey);
    }
    const until = !held.direct ? 'finished' : held.replicas.some((r) => !before.includes(r.node)) ? 'ran' : undefined;
    if (until === undefined || !pendingBefore(held, held.generation, until)) return Promise.resolve(call.revision);
    return new Promise((resolve) => held.waiting.push({ before: held.generation, until, answer: () => resolve(call.revision) }));
  }

  /** Admit a direct write under `term` (throws 503 `primary_not_placed` otherwise); `finished` once it was answered. */
  admit(key: string, where: ShardRef, term: unknown): Admitted {
    const held = this.held.get(key);
    if (held === undefined || !held.direct || held.failed || held.term !== term) throw nodeErrors.primaryNotPlaced(where.index, where.shard, term);
    const generation = held.generation;
    count(held.running, generation, 1);
    count(held.writing, generation, 1);
    let ran = false;
    let finished = false;
    const settle = (): void => {
      if (held.waiting.length === 0) return;
      const answered = held.waiting.filter((w) => !pendingBefore(held, w.before, w.until));
      if (answered.length === 0) return;
      held.waiting = held.waiting.filter((w) => !answered.includes(w));
      for (const w of answered) w.answer();
    };
    const admitted: Admitted = {
      replicas: held.replicas,
      ran: () => {
        if (ran) return;
        ran = true;
        count(held.writing, generation, -1);
        settle();
      },
      finished: () => {
        if (finished) return;
        finished = true;
        admitted.ran();
        count(held.running, generation, -1);
        settle();
      },
    };
    return admitted;
  }

  /**
   * Relay a direct write's changes to the replicas it was admitted with;
   * resolves with the names of those that failed (and stops taking direct
   * writes if any did).
   */
  async relay(key: string, where: ShardRef, term: number, replicas: readonly RelayTarget[], changes: ReplicatedChange[], commit: boolean,
    schema: Record<string, unknown> | undefined): Promise<string[]> {
    if (replicas.length === 0 || changes.length === 0) return [];
    const outcomes = await Promise.allSettled(replicas.map((target) => this.queue(key, where, target).send(term, changes, commit, schema)));
    const failed = replicas.filter((_, i) => outcomes[i]!.status === 'rejected').map((target) => target.node);
    if (failed.length > 0) {
      const held = this.held.get(key);
      if (held !== undefined) held.failed = true;
    }
    return failed;
  }

  /** The copy was dropped: a copy made again under the same name starts unplaced. */
  forget(key: string): void {
    const held = this.held.get(key);
    this.held.delete(key);
    if (held !== undefined) held.direct = false;
    for (const [relayKey] of this.relays) if (relayKey.startsWith(`${key}\u0000`)) this.relays.delete(relayKey);
  }

  private queue(key: string, where: ShardRef, target: RelayTarget): CopyRelay {
    const relayKey = `${key}\u0000${target.node}`;
    let relay = this.relays.get(relayKey);
    if (relay === undefined) {
      const peers = this.peers as RelayPeers;
      relay = new CopyRelay(where.index, where.shard, () => peers.client(target), RELAY_TIMEOUT_MS);
      this.relays.set(relayKey, relay);
    }
    return relay;
  }
}

/** Whether direct writes admitted in a generation below `before` have not yet run, or not yet finished. */
function pendingBefore(held: Held, before: number, until: 'ran' | 'finished'): boolean {
  for (const generation of (until === 'ran' ? held.writing : held.running).keys()) if (generation < before) return true;
  return false;
}

/** Add `delta` to the count of `generation`; a count that reaches 0 is removed. */
function count(counts: Map<number, number>, generation: number, delta: number): void {
  const n = (counts.get(generation) ?? 0) + delta;
  if (n > 0) counts.set(generation, n);
  else counts.delete(generation);
}
