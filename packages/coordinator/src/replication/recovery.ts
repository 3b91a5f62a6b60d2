/**
 * Bringing one replica copy back in sync (DESIGN.md "Writes, versions,
 * replication", step 3), driven by the coordinator, which reads from the
 * primary and writes to the replica:
 *
 * 1. *Copying.* The copy receives this coordinator's live relays (not
 *    awaited: it is not in sync; a primary taking direct writes relays none
 *    to it yet). From its checkpoint, the primary's operation-log entries are
 *    replayed onto it (`shard.changes` → `doc.replicate`). If the log no
 *    longer reaches back that far, or the copy's checkpoint is from another
 *    term (a demoted primary, whose unacknowledged writes must go), the copy
 *    is emptied and every document of the primary copied over
 *    (`shard.scan`), then told it holds everything up to the primary's seq
 *    read before the copy began (`shard.follow`). A replica keeps the newest
 *    origin of each document, so replayed, copied and live changes may
 *    arrive in any order.
 * 2. *Tracking.* Relays now wait for the copy too (a failure restarts the
 *    recovery): this coordinator's, or, when the primary takes direct
 *    writes, the primary's, once it is placed relaying to the copy (the
 *    push is answered after the writes admitted before it finished). Once
 *    the copy's checkpoint reaches the primary's seq read after that, every
 *    change is on it: it joins the in-sync set.
 *
 * A failed attempt is retried with backoff while the copy's node and the
 * primary are active and the term is the same; a new term cancels it.
 */
import { toTesseraError } from '@tessera/errors';
import type {
  ReplicateCall, ReplicatedChange, ReplicationPositionReply, RpcClient, ScanReply, ShardStatsReply,
} from '@tessera/rpc';
import type { Placement } from './placement.js';
import type { ReplicationLog, ReplicationOptions } from './options.js';
import type { CopyRecovery, ShardGroup } from './shard-group.js';

/** Rounds of the tracking step before the attempt is abandoned (each replays what arrived meanwhile). */
const TRACKING_ROUNDS_MAX = 20;
/** Longest wait between two attempts. */
const RETRY_MS_MAX = 10_000;

export interface RecoveryContext {
  readonly options: ReplicationOptions;
  readonly log: ReplicationLog;
  /** The shard's placement now; undefined once its index is gone. */
  placement(group: ShardGroup): Placement | undefined;
  client(group: ShardGroup, node: string): RpcClient;
  schema(group: ShardGroup): Record<string, unknown> | undefined;
  isActive(node: string): boolean;
  /** Resolves once every write of the shard after it reaches the tracking copy `node` (relayed by the primary or by this coordinator). */
  tracked(group: ShardGroup, node: string, term: number): Promise<void>;
  /** Add `node` to the in-sync set, if the shard is still in `term`. */
  markInSync(group: ShardGroup, node: string, term: number, recovery: Recovery): Promise<boolean>;
}

class RecoveryAborted extends Error {}

export class Recovery implements CopyRecovery {
  /** Relays wait for the copy (step 2). */
  tracking = false;
  /** A relay the copy failed while tracking: the attempt is void. */
  failure: unknown = undefined;
  private cancelled = false;
  private wakeUp: (() => void) | undefined;
  private done: Promise<void> = Promise.resolve();

  constructor(private readonly ctx: RecoveryContext, private readonly group: ShardGroup, readonly node: string) {}

  start(): void {
    this.group.recoveries.set(this.node, this);
    this.done = this.run();
  }

  /** Stop after the current call; the copy stays out of sync. */
  cancel(): void {
    this.cancelled = true;
    this.wakeUp?.();
    if (this.group.recoveries.get(this.node) === this) this.group.recoveries.delete(this.node);
  }

  get isCancelled(): boolean {
    return this.cancelled;
  }

  /** Resolves when the recovery ended (in sync, cancelled, or given up). */
  finished(): Promise<void> {
    return this.done;
  }

  relayFailed(err: unknown): void {
    if (this.tracking) this.failure = err;
  }

  private async run(): Promise<void> {
    let waitMs = this.ctx.options.recoveryRetryMs;
    try {
      for (let attempt = 1; !this.cancelled; attempt++) {
        const placement = this.ctx.placement(this.group);
        if (placement === undefined || !this.wanted(placement)) return;
        try {
          await this.attempt(placement);
          return;
        } catch (err) {
          if (this.cancelled) return;
          this.ctx.log.warn({ index: this.group.index, shard: this.group.shard, node: this.node, attempt, err: describe(err) },
            'shard copy recovery failed; retrying');
        }
        await this.sleep(waitMs);
        waitMs = Math.min(waitMs * 2, RETRY_MS_MAX);
      }
    } finally {
      this.tracking = false;
      if (this.group.recoveries.get(this.node) === this) this.group.recoveries.delete(this.node);
    }
  }

  /** The copy still needs recovering, and can be. */
  private wanted(placement: Placement): boolean {
    const { primary } = placement;
    return primary !== undefined && primary !== this.node && placement.copies.includes(this.node) && !placement.inSync.includes(this.node) &&
      this.ctx.isActive(this.node) && this.ctx.isActive(primary);
  }

  private async attempt(placement: Placement): Promise<void> {
    const { term } = placement;
    const primary = placement.primary as string;
    this.tracking = false;
    this.failure = undefined;
    const started = Date.now();
    const ref = { index: this.group.index, shard: this.group.shard };
    const replicaPosition = positionOf(await this.replica().call('shard.stats', ref));
    const primaryStats = await this.source(primary).call('shard.stats', ref);
    const primaryPosition = positionOf(primaryStats);
    this.check(term);
    // The copy's checkpoint counts in this term's numbering, and the log still holds what follows it.
    let fromLog = replicaPosition.checkpointTerm === term && replicaPosition.checkpoint <= primaryStats.seq &&
      replicaPosition.checkpoint + 1 >= primaryPosition.oplogFirstSeq;
    let replayed = 0;
    if (fromLog) {
      try {
        replayed = await this.replay(primary, term, replicaPosition.checkpoint, primaryStats.seq);
      } catch (err) {
        if (toTesseraError(err).code !== 'oplog_trimmed') throw err;
        fromLog = false;
      }
    }
    const copied = fromLog ? 0 : await this.copy(primary, term);

    this.tracking = true;
    // The primary relays to the copy from here on when placed direct: the seq read below is read after that holds.
    await this.ctx.tracked(this.group, this.node, term);
    this.check(term);
    for (let round = 0; round < TRACKING_ROUNDS_MAX; round++) {
      // The primary's seq first: every change after it is relayed to this copy and awaited.
      const target = (await this.source(primary).call('shard.stats', ref)).seq;
      const position = positionOf(await this.replica().call('shard.stats', ref));
      this.check(term);
      this.group.positions.set(this.node, position);
      if (position.checkpointTerm !== term) throw new Error(`the copy's checkpoint is in term ${position.checkpointTerm}, not ${term}`);
      if (position.checkpoint >= target) {
        if (!(await this.ctx.markInSync(this.group, this.node, term, this))) throw new RecoveryAborted('the shard changed before the copy joined the in-sync set');
        this.ctx.log.info({
          index: this.group.index, shard: this.group.shard, node: this.node, term, seq: position.checkpoint,
          mode: fromLog ? 'log' : 'copy', replayed, copied, ms: Date.now() - started,
        }, 'shard copy in sync');
        return;
      }
      replayed += await this.replay(primary, term, position.checkpoint, target);
    }
    throw new Error(`the copy did not reach the primary's seq in ${TRACKING_ROUNDS_MAX} rounds`);
  }

  /** Operation-log entries after `afterSeq`, up to `untilSeq` at least, onto the copy; the number replayed. */
  private async replay(primary: string, term: number, afterSeq: number, untilSeq: number): Promise<number> {
    let cursor = afterSeq;
    let count = 0;
    while (cursor < untilSeq) {
      const page = await this.source(primary).call('shard.changes',
        { index: this.group.index, shard: this.group.shard, afterSeq: cursor, limit: this.ctx.options.catchUpPageChanges });
      this.check(term);
      const last = page.changes[page.changes.length - 1];
      if (last === undefined) break;
      await this.apply(term, page.changes);
      cursor = last.seq ?? cursor;
      count += page.changes.length;
    }
    return count;
  }

  /** Empty the copy and copy every document of the primary; the number copied. */
  private async copy(primary: string, term: number): Promise<number> {
    const ref = { index: this.group.index, shard: this.group.shard };
    await this.replica().call('shard.drop', ref);
    await this.replica().call('shard.open', ref);
    // Read after the copy was emptied: every change after it reaches the copy live.
    const base = (await this.source(primary).call('shard.stats', ref)).seq;
    this.check(term);
    let after: ScanReply['documents'][number]['id'] | undefined;
    let count = 0;
    for (;;) {
      const page = await this.source(primary).call('shard.scan',
        { ...ref, limit: this.ctx.options.copyPageDocuments, origins: true, ...(after === undefined ? {} : { after }) });
      this.check(term);
      if (page.documents.length > 0) {
        await this.apply(term, page.documents.map((d) => {
          const change: ReplicatedChange = {
            id: d.id, version: d.version, deleted: false, body: d.body, originTerm: d.originTerm ?? 1, originSeq: d.originSeq ?? 1,
          };
          if (d.content !== undefined) change.content = d.content;
          if (d.indexed !== undefined) change.indexed = d.indexed;
          return change;
        }));
        count += page.documents.length;
        after = page.documents[page.documents.length - 1]?.id;
      }
      if (page.done) break;
    }
    await this.replica().call('shard.follow', { ...ref, term, checkpoint: base });
    return count;
  }

  private async apply(term: number, changes: ReplicateCall['changes']): Promise<void> {
    const call: ReplicateCall = { index: this.group.index, shard: this.group.shard, term, changes };
    const schema = this.ctx.schema(this.group);
    if (schema !== undefined) call.schema = schema;
    const reply = await this.replica().call('doc.replicate', call);
    this.group.positions.set(this.node, reply.position);
  }

  private check(term: number): void {
    if (this.cancelled) throw new RecoveryAborted('cancelled');
    if (this.failure !== undefined) throw new RecoveryAborted(`a relay to the copy failed: ${describe(this.failure)}`);
    const placement = this.ctx.placement(this.group);
    if (placement === undefined || placement.term !== term || !this.wanted(placement)) throw new RecoveryAborted('the shard changed');
  }

  private replica(): RpcClient {
    return this.ctx.client(this.group, this.node);
  }

  private source(primary: string): RpcClient {
    return this.ctx.client(this.group, primary);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done(): void {
        clearTimeout(timer);
        self.wakeUp = undefined;
        resolve();
      }
      this.wakeUp = done;
    });
  }
}

function positionOf(stats: ShardStatsReply): ReplicationPositionReply {
  if (stats.replication === undefined) throw new Error('the node does not report a replication position (an older version?)');
  return stats.replication;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
