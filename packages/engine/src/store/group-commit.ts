/**
 * Group commit: many writers, one LevelDB batch at a time.
 *
 * Each submitted change waits in a queue. One batch is in flight at a time;
 * when it completes, the queued changes (up to `entriesMax`) go out as the
 * next single batch, `sync` if any of them asked for it. So N concurrent
 * `?commit` writes share one fsync (a sync put one at a time runs at
 * 3.7k/s, batched puts at 780k/s: ENGINE.md), and uncommitted writes are
 * batched the same way. Writers beyond `entriesMax` wait for a later batch.
 *
 * When the shard is idle, the first change starts a batch after
 * `windowMs` (0: on the next turn of the event loop, so writers of the same
 * tick share it); while a batch is in flight, changes simply accumulate.
 *
 * `commitBatch` may answer each change on its own (a value or an Error); if it
 * throws, every change of the batch is rejected with that error. It may also
 * answer a `PendingBatch`: the batch is written, the next may go, and its
 * outcomes come later (a batch waiting for the commit log's fdatasync).
 */
import assert from 'node:assert/strict';

export type BatchOutcome<R> = { ok: true; value: R } | { ok: false; error: Error };

/** A batch written whose outcomes come later; the next batch need not wait for them. */
export interface PendingBatch<R> {
  outcomes: Promise<BatchOutcome<R>[]>;
}

export type CommitBatch<C, R> = (changes: C[], sync: boolean) => Promise<BatchOutcome<R>[] | PendingBatch<R>>;

export interface GroupCommitOptions {
  /** How long the first change of an idle queue waits for company (ms). */
  windowMs: number;
  /** Changes per batch at most. */
  entriesMax: number;
}

/** Where the outcome of a queued change goes: slot `slot` of its submitter's answer. */
interface Settler<R> {
  settle(slot: number, outcome: BatchOutcome<R>): void;
}

/** One `submit`: its promise. */
class SingleSettler<R> implements Settler<R> {
  constructor(private readonly resolve: (value: R) => void, private readonly reject: (error: Error) => void) {}

  settle(_slot: number, outcome: BatchOutcome<R>): void {
    if (outcome.ok) this.resolve(outcome.value);
    else this.reject(outcome.error);
  }
}

/** One `submitMany`: every change's outcome in its place, answered once all have one. */
class GroupSettler<R> implements Settler<R> {
  private readonly outcomes: BatchOutcome<R>[];
  private left: number;

  constructor(size: number, private readonly resolve: (outcomes: BatchOutcome<R>[]) => void) {
    this.outcomes = new Array<BatchOutcome<R>>(size);
    this.left = size;
  }

  settle(slot: number, outcome: BatchOutcome<R>): void {
    this.outcomes[slot] = outcome;
    if (--this.left === 0) this.resolve(this.outcomes);
  }
}

interface Waiting<C, R> {
  change: C;
  sync: boolean;
  settler: Settler<R>;
  slot: number;
}

export class GroupCommit<C, R> {
  private queue: Waiting<C, R>[] = [];
  private inFlight = false;
  private timer: { kind: 'timeout'; handle: NodeJS.Timeout } | { kind: 'immediate'; handle: NodeJS.Immediate } | undefined;
  private idleWaiters: (() => void)[] = [];
  /** Pending batches (written, outcomes to come). */
  private pending = 0;

  constructor(
    private readonly commitBatch: CommitBatch<C, R>,
    private readonly options: GroupCommitOptions,
  ) {
    assert.ok(Number.isInteger(options.entriesMax) && options.entriesMax >= 1, 'entriesMax must be a positive integer');
    assert.ok(options.windowMs >= 0, 'windowMs must not be negative');
  }

  /** Changes waiting for a batch (the one in flight excluded). */
  get queued(): number {
    return this.queue.length;
  }

  submit(change: C, sync: boolean): Promise<R> {
    return new Promise<R>((resolve, reject) => this.enqueue(change, sync, new SingleSettler(resolve, reject), 0));
  }

  /**
   * Queue `changes` in order, as `submit` would one by one, with one promise
   * for them all: it resolves with each change's outcome in its place (never
   * rejects), once every one has its own.
   */
  submitMany(changes: readonly C[], sync: boolean): Promise<BatchOutcome<R>[]> {
    if (changes.length === 0) return Promise.resolve([]);
    return new Promise<BatchOutcome<R>[]>((resolve) => {
      const settler = new GroupSettler<R>(changes.length, resolve);
      for (let i = 0; i < changes.length; i++) this.enqueue(changes[i] as C, sync, settler, i);
    });
  }

  private enqueue(change: C, sync: boolean, settler: Settler<R>, slot: number): void {
    this.queue.push({ change, sync, settler, slot });
    if (this.inFlight) return;
    if (this.queue.length >= this.options.entriesMax) {
      this.flushNow();
    } else if (this.timer === undefined) {
      this.timer = this.options.windowMs > 0
        ? { kind: 'timeout', handle: setTimeout(() => this.flushNow(), this.options.windowMs) }
        : { kind: 'immediate', handle: setImmediate(() => this.flushNow()) };
    }
  }

  /** Resolves once nothing is queued or in flight. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private flushNow(): void {
    if (this.timer !== undefined) {
      if (this.timer.kind === 'timeout') clearTimeout(this.timer.handle);
      else clearImmediate(this.timer.handle);
      this.timer = undefined;
    }
    if (this.inFlight || this.queue.length === 0) return;
    const max = this.options.entriesMax;
    let taken: Waiting<C, R>[];
    if (this.queue.length <= max) {
      taken = this.queue;
      this.queue = [];
    } else {
      taken = this.queue.slice(0, max);
      this.queue = this.queue.slice(max);
    }
    this.inFlight = true;
    void this.write(taken);
  }

  private async write(taken: Waiting<C, R>[]): Promise<void> {
    const changes = new Array<C>(taken.length);
    let sync = false;
    for (let i = 0; i < taken.length; i++) {
      changes[i] = taken[i].change;
      if (taken[i].sync) sync = true;
    }
    let outcomes: BatchOutcome<R>[] | PendingBatch<R> | undefined;
    let failure: Error | undefined;
    try {
      outcomes = await this.commitBatch(changes, sync);
    } catch (err) {
      failure = err instanceof Error ? err : new Error(String(err));
    }
    this.inFlight = false;
    if (outcomes !== undefined && !Array.isArray(outcomes)) {
      this.pending++;
      this.next();
      try {
        outcomes = await outcomes.outcomes;
      } catch (err) {
        outcomes = undefined;
        failure = err instanceof Error ? err : new Error(String(err));
      }
      this.pending--;
    }
    if (outcomes !== undefined) assert.equal(outcomes.length, taken.length, 'one outcome per change');
    for (let i = 0; i < taken.length; i++) {
      const waiting = taken[i];
      waiting.settler.settle(waiting.slot, outcomes?.[i] ?? { ok: false, error: failure ?? new Error('batch failed') });
    }
    this.next();
  }

  private isIdle(): boolean {
    return !this.inFlight && this.queue.length === 0 && this.pending === 0;
  }

  /** After a batch: the next one (changes that arrived while it was in flight have waited long enough: no window), or wake the idle waiters. */
  private next(): void {
    if (this.queue.length > 0) {
      this.flushNow();
    } else if (this.isIdle()) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const wake of waiters) wake();
    }
  }
}
