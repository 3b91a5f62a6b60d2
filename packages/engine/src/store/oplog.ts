/**
 * The operation log of one shard copy: one entry per change, keyed by seq
 * (store/keys.ts). Entries are appended by the shard inside each change's
 * batch; this class reads them (replica catch-up, crash replay) and trims the
 * log to the last `entriesMax` entries in the background, with one range
 * delete at a time.
 *
 * `firstSeq` is the lowest seq a reader may still get. It moves up before the
 * range delete starts (those entries are gone as far as readers know);
 * `clearedFrom` is where the physical delete must start, so a failed trim
 * is retried from there by the next one.
 */
import assert from 'node:assert/strict';
import type { ClassicLevel } from 'classic-level';
import type { OplogEntry } from '../documents/types.js';
import { engineErrors } from '../errors.js';
import { oplogKey, oplogKeySeq, PREFIX_OPLOG, spaceRange } from './keys.js';
import { decodeOplogEntry } from './records.js';

export type ShardDatabase = ClassicLevel<Buffer, Buffer>;

/** Entries per `read` call at most: replica catch-up pages through the log. */
export const OPLOG_READ_ENTRIES_MAX = 10_000;

export class Oplog {
  private first: number;
  private clearedFrom: number;
  private trimming: Promise<void> | undefined;
  /** Last seq appended: a finished trim checks again against it, so the log converges once writes stop. */
  private lastSeq = 0;
  /** Entries trimmed beyond the bound before a trim starts: ~1% of the bound, so a trim is one range delete per many batches. */
  private readonly slack: number;
  trims = 0;
  trimFailures = 0;

  constructor(private readonly db: ShardDatabase, private readonly entriesMax: number, firstSeq: number) {
    assert.ok(Number.isInteger(entriesMax) && entriesMax >= 1, 'oplog entriesMax must be a positive integer');
    this.first = firstSeq;
    this.clearedFrom = firstSeq;
    this.slack = Math.floor(entriesMax / 100);
  }

  /**
   * First seq held (or `lastSeq + 1` when the log is empty), checking that the
   * last entry is the shard's last seq (they are written in one batch).
   */
  static async bounds(db: ShardDatabase, lastSeq: number): Promise<number> {
    const range = spaceRange(PREFIX_OPLOG);
    const [firstKey] = await db.keys({ ...range, limit: 1 }).all();
    if (firstKey === undefined) {
      assert.equal(lastSeq, 0, 'the shard counters have a seq but the operation log is empty');
      return 1;
    }
    const [lastKey] = await db.keys({ ...range, limit: 1, reverse: true }).all();
    assert.ok(lastKey !== undefined);
    assert.equal(oplogKeySeq(lastKey), lastSeq, 'the last oplog entry must be the last seq of the shard counters');
    return oplogKeySeq(firstKey);
  }

  get firstSeq(): number {
    return this.first;
  }

  /** After a reopen: the log on disk is the truth. */
  reset(firstSeq: number, lastSeq: number): void {
    this.lastSeq = lastSeq;
    this.first = firstSeq;
    this.clearedFrom = firstSeq;
  }

  /**
   * The first seq that must be kept whatever the bound: entries the search
   * index has not yet persisted in a segment are what crash replay reads.
   */
  retainFrom = Number.POSITIVE_INFINITY;

  /** Called after each batch: starts a background trim when the log is over its bound. */
  afterAppend(lastSeq: number): void {
    this.lastSeq = lastSeq;
    if (this.trimming !== undefined) return;
    const keepFrom = Math.min(lastSeq - this.entriesMax + 1, this.retainFrom);
    if (keepFrom - this.clearedFrom <= this.slack) return;
    this.first = Math.max(this.first, keepFrom);
    const range = { gte: oplogKey(this.clearedFrom), lt: oplogKey(keepFrom) };
    this.trimming = this.db.clear(range).then(
      () => {
        this.clearedFrom = keepFrom;
        this.trims++;
        this.trimming = undefined;
        this.afterAppend(this.lastSeq);
      },
      () => {
        // Retried from `clearedFrom` after the next batch; the entries are already invisible to readers.
        this.trimFailures++;
        this.trimming = undefined;
      },
    );
  }

  /** Resolves when no trim is running (before closing or reopening the database). */
  async settled(): Promise<void> {
    while (this.trimming !== undefined) await this.trimming;
  }

  /** Up to `limit` entries with seq > afterSeq, in seq order. */
  async read(afterSeq: number, limit: number): Promise<OplogEntry[]> {
    if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) throw engineErrors.invalidOplogRead('afterSeq must be a non-negative integer');
    if (!Number.isInteger(limit) || limit < 1 || limit > OPLOG_READ_ENTRIES_MAX) {
      throw engineErrors.invalidOplogRead(`limit must be an integer from 1 to ${OPLOG_READ_ENTRIES_MAX}`);
    }
    if (afterSeq + 1 < this.first) throw engineErrors.oplogTrimmed(afterSeq, this.first);
    const values = await this.db.values({ gt: oplogKey(afterSeq), lt: Buffer.of(PREFIX_OPLOG + 1), limit }).all();
    // A trim may have run during the read: then the first entries may be missing.
    if (afterSeq + 1 < this.first) throw engineErrors.oplogTrimmed(afterSeq, this.first);
    const entries = values.map(decodeOplogEntry);
    for (let i = 0; i < entries.length; i++) {
      assert.equal(entries[i].seq, afterSeq + 1 + i, 'operation log entries must be contiguous');
    }
    return entries;
  }
}
