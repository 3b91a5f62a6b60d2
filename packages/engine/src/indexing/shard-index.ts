/**
 * The search index of one shard copy (ENGINE.md "Write path" steps 2–5): the
 * current write buffer, frozen buffers waiting for their flush, and the
 * published segments (SegmentStore), with flush and merge scheduling.
 *
 * Where a docid's live copy is: at most one of {segments, frozen buffers,
 * current buffer}. Indexing a docid deletes every older copy first (segment
 * deletion bitsets, frozen buffers, the current buffer's own replace), then
 * adds to the current buffer. All of this is synchronous: a search snapshot
 * taken after `apply` returns sees the change.
 *
 * Flush: when the current buffer passes `writeBufferBytesMax` (or has taken
 * `writeBufferOpsMax` changes) it is frozen and a new one started; frozen
 * buffers are flushed oldest first, one at a time, each published by
 * SegmentStore.addSegment with the buffer's seq. A frozen buffer stays in
 * every snapshot until its segment is adopted here, in the same synchronous
 * step that removes the buffer, so no snapshot sees a doc twice or not at all.
 * A failed flush leaves the buffer frozen and searchable; it is retried after
 * `flushRetryMs` (doubling up to FLUSH_RETRY_MS_MAX). Flushes stay in order:
 * a later buffer never publishes a higher seq over an unflushed earlier one,
 * or a crash would lose the earlier buffer's changes.
 *
 * Merge: after each flush the TieredMergePolicy picks one group; one merge
 * runs at a time on deletion snapshots, while writes go on. Deletes that hit
 * the sources meanwhile are recorded and applied to the merged segment once
 * it is adopted (SegmentStore carries those seen before its manifest put; the
 * record covers the put itself and the step until adoption).
 *
 * Crash safety: the manifest's seq says which op-log entries the segments
 * cover; `replay` re-applies the entries after it. Those are bounded
 * (`replayEntriesMax`): while the buffers hold more changes than that, the
 * shard holds its next write batch back (`admit`) until a flush persists
 * some, so recovery time after a crash does not grow with the write rate. Deletion bitsets are
 * persisted with every manifest put (flushes, merges); a delete not yet
 * persisted comes back by replay, since its op is after the manifest seq.
 */
import assert from 'node:assert/strict';
import type { Schema } from '@tessera/schema';
import type { DocumentId, DocumentLengths, OplogEntry } from '../documents/types.js';
import { flushInBackground, mergeInBackground } from '../segments/background.js';
import { TieredMergePolicy, type TieredMergePolicyOptions } from '../segments/merge-policy.js';
import type { SegmentReader } from '../segments/segment-reader.js';
import { SegmentStore, type SegmentDatabase } from '../segments/segment-store.js';
import { WriteBuffer, type IndexableDocument } from '../segments/write-buffer.js';
import { documentTerms } from './document-terms.js';
import type { SearchReader } from '../search/index.js';

export interface ShardIndexOptions {
  /** Estimated heap bytes of the current write buffer before it is flushed. Default 32 MiB. */
  writeBufferBytesMax?: number;
  /**
   * Changes (op-log entries) the current buffer takes before it is flushed.
   * Default 10,000: with `replayEntriesMax` it bounds what a crash leaves to
   * replay (R14: 1,000,000 documents over 5 copies replayed ~50,000 entries
   * a second on 2 cores, and ready must come within 10 s).
   */
  writeBufferOpsMax?: number;
  /**
   * Changes the buffers (current and frozen) may hold before they are
   * persisted in segments: the op-log entries a crash leaves to replay, up
   * to one write batch more. Beyond it `admit` holds writes back until a
   * flush lands. Default twice `writeBufferOpsMax` (one buffer filling while
   * the one before is flushed); at least `writeBufferOpsMax`.
   */
  replayEntriesMax?: number;
  /**
   * The current buffer is also flushed once the document versions it holds
   * that were replaced or deleted since they were added outnumber both its
   * live documents and this. A replaced version keeps its postings, norms and
   * values in the buffer until it is flushed (the flush drops it): without
   * this a few documents rewritten steadily filled the buffer to
   * `writeBufferOpsMax` with dead versions (R16 soak: 2,000 documents, 50
   * replacements/s, ~1 KB of heap each, 50,000 versions — ~17 min —
   * before a flush). With it the buffer holds at most about twice its live
   * documents (or this many dead versions). Default 4,096.
   */
  writeBufferDeadMin?: number;
  /** The merge policy, or its options. Default: TieredMergePolicy defaults. */
  mergePolicy?: TieredMergePolicy | TieredMergePolicyOptions;
  /** First wait before retrying a failed flush or merge, ms. Default 1,000. */
  retryMs?: number;
  /**
   * A buffer that has taken no change for this long is flushed into a
   * segment (ENGINE.md: on its budget "or when it idles"), so that a quiet
   * index is searched through segments and their sorted/encoded structures,
   * not the write buffer. Default 1,000 ms; 0 turns it off.
   */
  idleFlushMs?: number;
  /** Called with each background failure (flush, merge), after it is counted; the shard logs it. */
  onBackgroundError?: (error: unknown, task: 'flush' | 'merge') => void;
  /** Called after a flush has persisted changes (`persistedSeq` moved): the shard may trim its op log. */
  onPersisted?: () => void;
}

export const SHARD_INDEX_DEFAULTS = {
  writeBufferBytesMax: 32 * 1024 * 1024,
  writeBufferOpsMax: 10_000,
  writeBufferDeadMin: 4096,
  retryMs: 1000,
  idleFlushMs: 1000,
} as const;

/** Longest wait between two retries of a failing flush, ms. */
export const FLUSH_RETRY_MS_MAX = 30_000;

/** One change of the op log, as the index needs it. */
export interface IndexChange {
  readonly seq: number;
  readonly docid: number;
  readonly id: DocumentId;
  /** The stored body after the change, or null for a delete. */
  readonly body: unknown;
  readonly version?: number;
}

/** A change with its terms computed (`prepare`): applying it cannot fail on input. */
export interface PreparedChange {
  readonly seq: number;
  readonly docid: number;
  /** Null: delete. */
  readonly document: IndexableDocument | null;
}

export interface ShardIndexMetrics {
  appliedSeq: number;
  persistedSeq: number;
  segments: number;
  segmentBytes: number;
  frozenBuffers: number;
  writeBufferBytes: number;
  writeBufferDocs: number;
  flushes: number;
  flushFailures: number;
  merges: number;
  mergeFailures: number;
  /** Times a write batch was held back by `admit` (the replay bound) until a flush ended: flushes falling behind the writes. */
  writeHolds: number;
  replayedEntries: number;
  replayFailures: number;
}

/** A flush that keeps failing (ShardIndex.flushFailure): the write buffers it holds stay in memory and the op log untrimmed. */
export interface FlushFailure {
  /** The last failure's message. */
  message: string;
  /** Failures in a row. */
  failures: number;
  /** When the first of them happened, ms since the epoch. */
  sinceMs: number;
}

export class ShardIndex {
  private current = new WriteBuffer();
  /** Changes taken by the current buffer (deletes of segment docs included). */
  private currentOps = 0;
  /** Frozen buffers, oldest first; the first is being flushed. */
  private readonly frozen: WriteBuffer[] = [];
  /** Adopted segments, oldest first: what snapshots show (store.readers may run ahead during a publish). */
  private segments: SegmentReader[];
  private flushing: Promise<void> | null = null;
  private merging: Promise<void> | null = null;
  /** Docids deleted from a running merge's sources since its snapshot. */
  private mergeDeletes: Set<number> | null = null;
  private mergeSources: readonly SegmentReader[] = [];
  private mergeRetryAt = 0;
  private wake: (() => void) | null = null;
  private closing = false;
  private lastChangeAt = 0;
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly settings: Required<Omit<ShardIndexOptions, 'mergePolicy' | 'onBackgroundError' | 'onPersisted'>>;
  /** Writers held back by `admit`, woken when a flush ends (landed or failed) or the index closes. */
  private admitWaiters: Array<() => void> = [];
  private readonly onPersisted: () => void;
  private readonly policy: TieredMergePolicy;
  private readonly onBackgroundError: (error: unknown, task: 'flush' | 'merge') => void;
  private readonly counters = { flushes: 0, flushFailures: 0, merges: 0, mergeFailures: 0, writeHolds: 0, replayedEntries: 0, replayFailures: 0 };
  /** The last background failure, for `/:metrics` and health checks; cleared by the next success. */
  lastError: unknown = null;
  /** The flushes failing in a row since the last one that succeeded: the buffers they hold cannot become segments. */
  private failingFlush: FlushFailure | null = null;

  private constructor(private readonly store: SegmentStore, options: ShardIndexOptions) {
    this.settings = {
      writeBufferBytesMax: options.writeBufferBytesMax ?? SHARD_INDEX_DEFAULTS.writeBufferBytesMax,
      writeBufferOpsMax: options.writeBufferOpsMax ?? SHARD_INDEX_DEFAULTS.writeBufferOpsMax,
      replayEntriesMax: options.replayEntriesMax ?? 2 * (options.writeBufferOpsMax ?? SHARD_INDEX_DEFAULTS.writeBufferOpsMax),
      writeBufferDeadMin: options.writeBufferDeadMin ?? SHARD_INDEX_DEFAULTS.writeBufferDeadMin,
      retryMs: options.retryMs ?? SHARD_INDEX_DEFAULTS.retryMs,
      idleFlushMs: options.idleFlushMs ?? SHARD_INDEX_DEFAULTS.idleFlushMs,
    };
    const s = this.settings;
    assert.ok(Number.isFinite(s.writeBufferBytesMax) && s.writeBufferBytesMax > 0, 'writeBufferBytesMax must be positive');
    assert.ok(Number.isInteger(s.writeBufferOpsMax) && s.writeBufferOpsMax >= 1, 'writeBufferOpsMax must be a positive integer');
    assert.ok(Number.isInteger(s.replayEntriesMax) && s.replayEntriesMax >= s.writeBufferOpsMax, 'replayEntriesMax must be an integer ≥ writeBufferOpsMax');
    assert.ok(Number.isInteger(s.writeBufferDeadMin) && s.writeBufferDeadMin >= 1, 'writeBufferDeadMin must be a positive integer');
    assert.ok(Number.isFinite(s.retryMs) && s.retryMs >= 0, 'retryMs must be ≥ 0');
    assert.ok(Number.isFinite(s.idleFlushMs) && s.idleFlushMs >= 0, 'idleFlushMs must be ≥ 0');
    this.policy = options.mergePolicy instanceof TieredMergePolicy ? options.mergePolicy : new TieredMergePolicy(options.mergePolicy);
    this.onBackgroundError = options.onBackgroundError ?? (() => undefined);
    this.onPersisted = options.onPersisted ?? (() => undefined);
    this.segments = [...store.readers];
    this.current.seq = store.seq;
  }

  /** Open the index kept in the shard's database (manifest + segments); then `replay` the op log after `appliedSeq`. */
  static async open(db: SegmentDatabase, options: ShardIndexOptions = {}): Promise<ShardIndex> {
    const store = await SegmentStore.open(db);
    const index = new ShardIndex(store, options);
    index.scheduleMerge();
    return index;
  }

  /** Highest op-log seq applied (segments + frozen buffers + current buffer). */
  get appliedSeq(): number {
    return this.current.seq;
  }

  /** Op-log seq the published segments cover: a crash replays after it, so the op log must keep the entries after it. */
  get persistedSeq(): number {
    return this.store.seq;
  }

  /** Op-log entries applied but not persisted in segments: what a crash now would leave to replay. */
  get unpersistedEntries(): number {
    return this.appliedSeq - this.persistedSeq;
  }

  /**
   * Call before writing a batch: undefined when it may go ahead, else a
   * promise that resolves when the running flush ends; ask again then. A
   * write is held back while the buffers hold `replayEntriesMax` unpersisted
   * changes or more and a flush is under way, so the replay after a crash
   * stays bounded whatever the write rate. Not while the flush keeps failing
   * (a full or broken disk): the writes go on into memory, as readiness
   * reports the failing flush, rather than stall without end.
   */
  admit(): Promise<void> | undefined {
    if (this.unpersistedEntries < this.settings.replayEntriesMax || this.flushing === null || this.failingFlush !== null || this.closing) {
      return undefined;
    }
    this.counters.writeHolds++;
    return new Promise<void>((resolve) => this.admitWaiters.push(resolve));
  }

  private wakeAdmitted(): void {
    const waiters = this.admitWaiters;
    this.admitWaiters = [];
    for (const wake of waiters) wake();
  }

  /**
   * Terms of a change (throws the schema's 400s): call before committing the
   * write, then `applyPrepared` after. With `deferText` the text values are
   * analysed on the analysis thread: apply once `document.text.ready` resolved.
   */
  prepare(change: IndexChange, schema: Schema, deferText = false): PreparedChange {
    const document = change.body === null || change.body === undefined
      ? null
      : documentTerms(schema, change.body, change.id, change.version === undefined ? { deferText } : { version: change.version, deferText });
    return { seq: change.seq, docid: change.docid, document };
  }

  /** Index (or, with a null body, delete) one change: `prepare` + `applyPrepared`. */
  apply(change: IndexChange, schema: Schema): void {
    this.applyPrepared(this.prepare(change, schema));
  }

  /** Apply a prepared change, synchronously; changes must come in increasing seq order. */
  applyPrepared(change: PreparedChange): void {
    assert.ok(!this.closing, 'the shard index is closed');
    assert.ok(change.seq > this.current.seq, `seq ${change.seq} applied after ${this.current.seq}`);
    assert.ok(Number.isInteger(change.docid) && change.docid >= 1, 'docid out of range');
    this.deleteOlder(change.docid);
    if (change.document === null) this.current.delete(change.docid);
    else this.current.add(change.docid, change.document);
    this.current.seq = change.seq;
    this.currentOps++;
    if (this.currentOps >= this.settings.writeBufferOpsMax || this.current.memoryBytes() >= this.settings.writeBufferBytesMax || this.mostlyDead()) {
      this.rotate();
    } else {
      this.noteChange();
    }
  }

  /** The current buffer holds more replaced or deleted versions than live documents (and than writeBufferDeadMin). */
  private mostlyDead(): boolean {
    const dead = this.current.docCount - this.current.liveCount;
    return dead >= this.settings.writeBufferDeadMin && dead > this.current.liveCount;
  }

  /** Last change time for the idle flush, checked by one coarse timer (not one per write). */
  private noteChange(): void {
    const idleMs = this.settings.idleFlushMs;
    if (idleMs === 0) return;
    this.lastChangeAt = Date.now();
    if (this.idleTimer !== null) return;
    this.idleTimer = setInterval(() => {
      if (this.closing || this.currentOps === 0) {
        this.stopIdleTimer();
      } else if (Date.now() - this.lastChangeAt >= idleMs) {
        this.stopIdleTimer();
        this.rotate();
      }
    }, Math.max(1, idleMs / 2));
    this.idleTimer.unref();
  }

  private stopIdleTimer(): void {
    if (this.idleTimer !== null) clearInterval(this.idleTimer);
    this.idleTimer = null;
  }

  /**
   * Crash recovery: apply op-log entries (in seq order) newer than
   * `appliedSeq`; older ones are skipped, so pages may overlap. A body that
   * no longer fits the schema is indexed as a delete (the document stays
   * stored but unsearchable) and counted in `replayFailures`.
   */
  replay(entries: readonly OplogEntry[], schema: Schema): void {
    for (const e of entries) {
      if (e.seq <= this.current.seq) continue;
      let prepared: PreparedChange;
      try {
        prepared = this.prepare({ seq: e.seq, docid: e.docid, id: e.id, body: e.op === 'put' ? (e.indexed ?? e.body ?? null) : null, version: e.version }, schema);
      } catch (err) {
        this.counters.replayFailures++;
        this.lastError = err;
        prepared = { seq: e.seq, docid: e.docid, document: null };
      }
      this.applyPrepared(prepared);
      this.counters.replayedEntries++;
    }
  }

  /**
   * The readers a search uses now: adopted segments, frozen buffers (oldest
   * first), then the current buffer, each with its deletions applied. The
   * current buffer keeps growing while held: use the list synchronously (a
   * frozen buffer or a segment only loses documents to deletes).
   */
  readers(): SearchReader[] {
    return [...this.segments, ...this.frozen, this.current];
  }

  /**
   * Lengths of the live documents, summed over every field's norms (a
   * field's length saturates at 65,535 in a segment). One walk of the
   * norms: for INFO, not for every search.
   */
  documentLengths(): DocumentLengths {
    const lengths: DocumentLengths = { documents: 0, sum: 0, lower: 0, upper: 0 };
    for (const part of [...this.segments, ...this.frozen, this.current]) {
      const norms: Uint16Array[] = [];
      for (const field of part.fieldNames()) {
        const n = part.fieldNorms(field);
        if (n !== null) norms.push(n);
      }
      for (let ordinal = 0; ordinal < part.docCount; ordinal++) {
        if (!part.isLiveOrdinal(ordinal)) continue;
        let length = 0;
        for (const n of norms) if (ordinal < n.length) length += n[ordinal]!;
        lengths.lower = lengths.documents === 0 ? length : Math.min(lengths.lower, length);
        lengths.upper = Math.max(lengths.upper, length);
        lengths.documents++;
        lengths.sum += length;
      }
    }
    return lengths;
  }

  /** Freeze the current buffer (when it holds changes) and wait until every frozen buffer is published. */
  async flush(): Promise<void> {
    if (this.currentOps > 0) this.rotate();
    while (this.flushing !== null) await this.flushing;
    // The loop only stops with buffers left after a failure during close.
    if (this.frozen.length > 0) {
      assert.ok(this.lastError !== null, 'flush stopped with buffers left and no error');
      throw this.lastError;
    }
  }

  /** Stop background work: waits for the running flush and merge (no new retries start). Unflushed changes come back by replay. */
  async close(): Promise<void> {
    this.closing = true;
    this.stopIdleTimer();
    this.wake?.();
    this.wakeAdmitted();
    while (this.flushing !== null || this.merging !== null) await Promise.all([this.flushing, this.merging]);
  }

  /** The flush failing now (each retry failed too since), or null when the last flush succeeded or none failed. */
  flushFailure(): FlushFailure | null {
    return this.failingFlush === null ? null : { ...this.failingFlush };
  }

  metrics(): ShardIndexMetrics {
    let segmentBytes = 0;
    for (const r of this.segments) segmentBytes += r.byteLength;
    let writeBufferBytes = this.current.memoryBytes();
    for (const b of this.frozen) writeBufferBytes += b.memoryBytes();
    return {
      appliedSeq: this.appliedSeq,
      persistedSeq: this.persistedSeq,
      segments: this.segments.length,
      segmentBytes,
      frozenBuffers: this.frozen.length,
      writeBufferBytes,
      writeBufferDocs: this.current.liveCount,
      ...this.counters,
    };
  }

  /** Delete every copy of `docid` outside the current buffer (which replaces its own on add). */
  private deleteOlder(docid: number): void {
    for (const r of this.segments) {
      if (r.delete(docid) && this.mergeDeletes !== null && this.mergeSources.includes(r)) this.mergeDeletes.add(docid);
    }
    for (const b of this.frozen) b.delete(docid);
  }

  private rotate(): void {
    const full = this.current;
    full.freeze();
    this.frozen.push(full);
    this.current = new WriteBuffer();
    this.current.seq = full.seq;
    this.currentOps = 0;
    this.flushing ??= this.flushLoop().finally(() => {
      this.flushing = null;
      this.wakeAdmitted();
    });
  }

  private async flushLoop(): Promise<void> {
    let retryMs = this.settings.retryMs;
    while (this.frozen.length > 0) {
      const buffer = this.frozen[0]!;
      try {
        let reader: SegmentReader | null = null;
        if (buffer.liveCount === 0) {
          // Nothing to write: only the seq (and segment deletions) to persist.
          await this.store.saveDeletions(buffer.seq);
        } else {
          const bytes = await flushInBackground(buffer);
          reader = await this.store.addSegment(bytes, buffer.seq, (docid) => buffer.isLive(docid));
          // Deletes that reached the buffer during the manifest put, after addSegment's own check.
          for (let o = 0; o < reader.docCount; o++) if (!buffer.isLive(reader.docids[o]!)) reader.delete(reader.docids[o]!);
        }
        // Adoption: one synchronous step, so a snapshot sees the docs in exactly one place.
        assert.equal(this.frozen.shift(), buffer);
        if (reader !== null) this.segments = [...this.segments, reader];
        this.counters.flushes++;
        this.lastError = null;
        this.failingFlush = null;
        retryMs = this.settings.retryMs;
        this.onPersisted();
        this.wakeAdmitted();
        this.scheduleMerge();
      } catch (err) {
        this.counters.flushFailures++;
        this.lastError = err;
        const message = err instanceof Error ? err.message : String(err);
        this.failingFlush = { message, failures: (this.failingFlush?.failures ?? 0) + 1, sinceMs: this.failingFlush?.sinceMs ?? Date.now() };
        this.onBackgroundError(err, 'flush');
        this.wakeAdmitted();
        if (this.closing) return;
        await this.sleep(retryMs);
        retryMs = Math.min(FLUSH_RETRY_MS_MAX, Math.max(1, retryMs * 2));
        if (this.closing) return;
      }
    }
  }

  /** Wait `ms`, or less when `close` wakes the loop. */
  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      // Unref'd: a retry alone must not keep the process alive.
      const timer = setTimeout(resolve, ms).unref();
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => {
      this.wake = null;
    });
  }

  private scheduleMerge(): void {
    if (this.merging !== null || this.closing || Date.now() < this.mergeRetryAt) return;
    const groups = this.policy.select(this.segments);
    if (groups.length === 0) return;
    const ids = new Set(groups[0]);
    const sources = this.segments.filter((r) => ids.has(r.id));
    this.merging = this.runMerge(sources).finally(() => {
      this.merging = null;
      this.scheduleMerge();
    });
  }

  private async runMerge(sources: readonly SegmentReader[]): Promise<void> {
    const snapshots = sources.map((s) => s.deleted.copy());
    const deletes = new Set<number>();
    this.mergeDeletes = deletes;
    this.mergeSources = sources;
    try {
      const bytes = await mergeInBackground(sources, snapshots);
      const merged = await this.store.replaceSegments(sources, snapshots, bytes);
      if (merged !== null) for (const docid of deletes) merged.delete(docid);
      // Adoption: the merged segment takes the place of the first source.
      const next: SegmentReader[] = [];
      let placed = false;
      for (const r of this.segments) {
        if (!sources.includes(r)) next.push(r);
        else if (!placed) {
          placed = true;
          if (merged !== null) next.push(merged);
        }
      }
      this.segments = next;
      this.counters.merges++;
    } catch (err) {
      this.counters.mergeFailures++;
      this.lastError = err;
      this.mergeRetryAt = Date.now() + this.settings.retryMs;
      this.onBackgroundError(err, 'merge');
    } finally {
      this.mergeDeletes = null;
      this.mergeSources = [];
    }
  }
}
