/**
 * One bound on what the LevelDB databases of a process's shard copies hold
 * in memory (their memtables and block caches), like RocksDB's
 * WriteBufferManager. Each database has a write buffer of its own
 * (`storeWriteBufferBytes`, 32 MiB by default, up to twice that while one is
 * written out) and a block cache: a node with many shard copies written at
 * once would otherwise hold that much per copy, and keep it after the burst
 * until the next writes fill each buffer again (the fuzz of issue 18: 15
 * copies, ~200 MB of RSS outside the JavaScript heap).
 *
 * Every `sampleMs` the budget reads LevelDB's own figure of each database
 * (`leveldb.approximate-memory-usage`: memtables + block cache) and makes
 * LevelDB write a memtable out — a compaction of an empty key range past
 * every key, which LevelDB starts by flushing the memtable into a level-0
 * table and which compacts nothing else — when
 *
 * - the databases together hold more than `bytesMax`: the ones holding most
 *   since their last flush, until the rest fit;
 * - a database held at least `idleBytesMin` of unflushed writes and saw none
 *   for `idleFlushMs`: memory goes back after a burst instead of staying
 *   until the next one.
 *
 * A flush is what LevelDB does by itself when a memtable is full: nothing
 * written is lost or changes place, and it is durable as before (the
 * LevelDB log holds every write until its memtable is written out).
 */
import type { ClassicLevel } from 'classic-level';

/** A key past every key a shard writes (keys.ts: prefixes 0x00-0x1f): the compacted range holds nothing. */
const FLUSH_RANGE_START = Buffer.of(0xff, 0xff, 0xff, 0xfe);
const FLUSH_RANGE_END = Buffer.of(0xff, 0xff, 0xff, 0xff);

export interface StoreMemoryOptions {
  /** What the databases may hold together, bytes. */
  bytesMax: number;
  /** How often usage is read, ms. */
  sampleMs: number;
  /** A database idle this long (no growth) has its unflushed writes flushed, ms; 0 never. */
  idleFlushMs: number;
  /** Unflushed bytes below which an idle database is left alone. */
  idleBytesMin: number;
}

export const STORE_MEMORY_DEFAULTS: Readonly<StoreMemoryOptions> = Object.freeze({
  bytesMax: 64 * 1024 * 1024,
  sampleMs: 250,
  idleFlushMs: 5_000,
  idleBytesMin: 1024 * 1024,
});

type Database = ClassicLevel<Buffer, Buffer>;

interface Tracked {
  db: Database;
  /** Usage right after the last flush (its block cache, mostly): what a flush cannot give back. */
  floor: number;
  /** Last usage read. */
  usage: number;
  /** When usage last grew. */
  grewAt: number;
  flushing: Promise<void> | undefined;
}

export interface StoreMemoryStats {
  /** Bytes the databases hold now, by LevelDB's figure. */
  bytes: number;
  databases: number;
  /** Memtable flushes this budget asked for (over the bound, or idle). */
  flushes: number;
}

export class StoreMemoryBudget {
  readonly options: StoreMemoryOptions;
  private readonly tracked = new Set<Tracked>();
  private timer: NodeJS.Timeout | undefined;
  private flushes = 0;

  constructor(options: Partial<StoreMemoryOptions> = {}) {
    this.options = { ...STORE_MEMORY_DEFAULTS, ...options };
    const { bytesMax, sampleMs, idleFlushMs, idleBytesMin } = this.options;
    for (const [name, value] of Object.entries({ bytesMax, sampleMs, idleFlushMs, idleBytesMin })) {
      if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`store memory option ${name} must be a non-negative integer`);
    }
  }

  /** Watch `db` (open) until the returned function is called; that function resolves once no flush of it runs. */
  add(db: Database): () => Promise<void> {
    const entry: Tracked = { db, floor: 0, usage: 0, grewAt: Date.now(), flushing: undefined };
    entry.usage = entry.floor = usageOf(db);
    this.tracked.add(entry);
    this.timer ??= setInterval(() => this.sample(), this.options.sampleMs).unref();
    return async () => {
      this.tracked.delete(entry);
      if (this.tracked.size === 0 && this.timer !== undefined) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
      await entry.flushing;
    };
  }

  stats(): StoreMemoryStats {
    let bytes = 0;
    for (const entry of this.tracked) bytes += usageOf(entry.db);
    return { bytes, databases: this.tracked.size, flushes: this.flushes };
  }

  /** Resolves once the flushes running now are done. */
  async settled(): Promise<void> {
    await Promise.all([...this.tracked].map((entry) => entry.flushing));
  }

  /** Read every database's usage and flush what the bound or idleness asks for. Exposed for tests. */
  sample(): void {
    const now = Date.now();
    let total = 0;
    for (const entry of this.tracked) {
      const usage = usageOf(entry.db);
      if (usage > entry.usage) entry.grewAt = now;
      entry.usage = usage;
      // A block cache that grew past the floor is not a memtable: keep the floor at the lowest usage seen.
      if (usage < entry.floor) entry.floor = usage;
      total += usage;
    }
    const { bytesMax, idleFlushMs, idleBytesMin } = this.options;
    if (total > bytesMax) {
      const byUnflushed = [...this.tracked].filter((e) => e.flushing === undefined).sort((a, b) => unflushed(b) - unflushed(a));
      for (const entry of byUnflushed) {
        if (total <= bytesMax || unflushed(entry) < idleBytesMin) break;
        total -= unflushed(entry);
        this.flush(entry);
      }
    }
    if (idleFlushMs > 0) {
      for (const entry of this.tracked) {
        if (entry.flushing === undefined && unflushed(entry) >= idleBytesMin && now - entry.grewAt >= idleFlushMs) this.flush(entry);
      }
    }
  }

  private flush(entry: Tracked): void {
    this.flushes++;
    entry.flushing = entry.db.compactRange(FLUSH_RANGE_START, FLUSH_RANGE_END)
      // A database closing or reopening (recovery) refuses: its memtable goes with it, or the next sample tries again.
      .catch(() => undefined)
      .then(() => {
        entry.flushing = undefined;
        entry.usage = entry.floor = usageOf(entry.db);
      });
  }
}

function unflushed(entry: Tracked): number {
  return Math.max(0, entry.usage - entry.floor);
}

function usageOf(db: Database): number {
  if (db.status !== 'open') return 0;
  try {
    const usage = Number(db.getProperty('leveldb.approximate-memory-usage'));
    return Number.isFinite(usage) ? usage : 0;
  } catch {
    return 0;
  }
}
