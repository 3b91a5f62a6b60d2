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
 * throws, every change of the batch is rejected with that error.
 */
import assert from 'node:assert/strict';

export type BatchOutcome<R> = { ok: true; value: R } | { ok: false; error: Error };

export type CommitBatch<C, R> = (changes: C[], sync: boolean) => Promise<BatchOutcome<R>[]>;

export interface GroupCommitOptions {
  /** How long the first change of an idle queue waits for company (ms). */
  windowMs: number;
  /** Changes per batch at most. */
  entriesMax: number;
}

interface Waiting<C, R> {
  change: C;
  sync: boolean;
  resolve: (value: R) => void;
  reject: (error: Error) => void;
}

export class GroupCommit<C, R> {
  private queue: Waiting<C, R>[] = [];
  private inFlight = false;
  private timer: { kind: 'timeout'; handle: NodeJS.Timeout } | { kind: 'immediate'; handle: NodeJS.Immediate } | undefined;
  private idleWaiters: (() => void)[] = [];

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
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ change, sync, resolve, reject });
      if (this.inFlight) return;
      if (this.queue.length >= this.options.entriesMax) {
        this.flushNow();
      } else if (this.timer === undefined) {
        this.timer = this.options.windowMs > 0
          ? { kind: 'timeout', handle: setTimeout(() => this.flushNow(), this.options.windowMs) }
          : { kind: 'immediate', handle: setImmediate(() => this.flushNow()) };
      }
    });
  }

  /** Resolves once nothing is queued or in flight. */
  idle(): Promise<void> {
    if (!this.inFlight && this.queue.length === 0) return Promise.resolve();
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
    let outcomes: BatchOutcome<R>[] | undefined;
    let failure: Error | undefined;
    try {
      outcomes = await this.commitBatch(changes, sync);
      assert.equal(outcomes.length, taken.length, 'one outcome per change');
    } catch (err) {
      failure = err instanceof Error ? err : new Error(String(err));
    }
    this.inFlight = false;
    for (let i = 0; i < taken.length; i++) {
      const outcome = outcomes?.[i];
      if (outcome === undefined) taken[i].reject(failure ?? new Error('batch failed'));
      else if (outcome.ok) taken[i].resolve(outcome.value);
      else taken[i].reject(outcome.error);
    }
    // Changes that arrived while this batch was in flight have waited long enough: no window.
    if (this.queue.length > 0) {
      this.flushNow();
    } else {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const wake of waiters) wake();
    }
  }
}
