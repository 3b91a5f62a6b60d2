/**
 * One bound on what the LevelDB databases of a process's shard copies hold
 * in memory (their memtables; they have no block cache), like RocksDB's
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
 *   among those that grew since their last flush, until the rest fit (what
 *   a database holds may be block cache, which a flush keeps: having grown
 *   since, it is flushed at most once for it);
 * - a database grew and then stayed the same for `idleFlushMs`: once, so
 *   memory goes back after a burst instead of staying until the next one
 *   (growth of the block cache alone costs an empty flush, which writes
 *   nothing);
 * - a database has held writes not yet flushed for `ageMsMax` while it kept
 *   growing: a steady trickle of writes never idles, and at 50 replaced
 *   documents/s (the R16 soak, ~2 MB/min into the memtable) a 32 MiB write
 *   buffer took ~16 minutes to fill — memory that grew for a quarter of an
 *   hour and held only versions already replaced. A bulk load fills the
 *   write buffer in seconds, before this matters.
 *
 * LevelDB writes memtables out on one background thread for the whole
 * process, which also runs every compaction: under a heavy load (1 MB
 * documents into 15 copies) a flush asked for waits behind the others, and
 * the memtables it turned immutable stay in memory meanwhile. So writes wait
 * too (`admit`, as RocksDB's write-buffer manager stalls them) while the
 * databases hold more than `stallFactor` × `bytesMax`, until a sample finds
 * them under it or `stallMsMax` has passed (usage that is block cache pinned
 * by readers is not written out: a write is held back, never deadlocked).
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
  /** A database holding writes not yet flushed for this long has them flushed even while it is written to, ms; 0 never. */
  ageMsMax: number;
  /** Writes wait while the databases hold more than this many times `bytesMax`. */
  stallFactor: number;
  /** Longest a write waits for that, ms. */
  stallMsMax: number;
}

/**
 * LevelDB's block cache of each shard copy: none (LevelDB's default is
 * 8 MiB). Decoded documents are cached above it, in the node's one document
 * cache, and segments are read once into memory, so a block cache per copy
 * mostly held what those do, 8 MiB more for every shard of every index
 * (15 copies: 66 MB after the fuzz of issue 18). Worse, LevelDB evicts only
 * when it inserts: a block bigger than a cache shard's share (a 1 MB
 * document read back is one 1 MB block; a 2 MiB cache has 16 shards of
 * 128 KiB) stays after the reads stop — 76 MB in 5 copies after the
 * MessagePack fuzz, for good. Without it LevelDB's memory is its memtables.
 */
export const STORE_BLOCK_CACHE_BYTES = 0;

export const STORE_MEMORY_DEFAULTS: Readonly<StoreMemoryOptions> = Object.freeze({
  bytesMax: 48 * 1024 * 1024,
  sampleMs: 250,
  idleFlushMs: 5_000,
  ageMsMax: 60_000,
  stallFactor: 2,
  stallMsMax: 1_000,
});

type Database = ClassicLevel<Buffer, Buffer>;

interface Tracked {
  db: Database;
  /** Last usage read. */
  usage: number;
  /** When usage last grew. */
  grewAt: number;
  /** Usage grew since the last flush started. */
  grown: boolean;
  /** When usage first grew since the last flush started (undefined: it has not). */
  grownSince: number | undefined;
  flushing: Promise<void> | undefined;
}

export interface StoreMemoryStats {
  /** Bytes the databases hold now, by LevelDB's figure. */
  bytes: number;
  databases: number;
  /** Memtable flushes this budget asked for (over the bound, or idle). */
  flushes: number;
  /** Writes that waited for the databases to write their memtables out. */
  stalls: number;
}

export class StoreMemoryBudget {
  readonly options: StoreMemoryOptions;
  private readonly tracked = new Set<Tracked>();
  private timer: NodeJS.Timeout | undefined;
  private flushes = 0;
  private stalls = 0;
  /** What the databases held at the last sample. */
  private total = 0;
  /** Writes waiting for the total to fall (`admit`). */
  private readonly waiting = new Set<() => void>();

  constructor(options: Partial<StoreMemoryOptions> = {}) {
    this.options = { ...STORE_MEMORY_DEFAULTS, ...options };
    const { bytesMax, sampleMs, idleFlushMs, ageMsMax, stallFactor, stallMsMax } = this.options;
    for (const [name, value] of Object.entries({ bytesMax, sampleMs, idleFlushMs, ageMsMax, stallFactor, stallMsMax })) {
      if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`store memory option ${name} must be a non-negative integer`);
    }
  }

  /** Watch `db` (open) until the returned function is called; that function resolves once no flush of it runs. */
  add(db: Database): () => Promise<void> {
    const entry: Tracked = { db, usage: usageOf(db), grewAt: Date.now(), grown: false, grownSince: undefined, flushing: undefined };
    this.tracked.add(entry);
    this.timer ??= setInterval(() => this.sample(), this.options.sampleMs).unref();
    return async () => {
      this.tracked.delete(entry);
      if (this.tracked.size === 0 && this.timer !== undefined) {
        clearInterval(this.timer);
        this.timer = undefined;
        this.total = 0;
        for (const done of [...this.waiting]) done();
      }
      await entry.flushing;
    };
  }

  stats(): StoreMemoryStats {
    let bytes = 0;
    for (const entry of this.tracked) bytes += usageOf(entry.db);
    return { bytes, databases: this.tracked.size, flushes: this.flushes, stalls: this.stalls };
  }

  /**
   * Undefined when a write may go on now; else a promise that resolves once
   * a sample finds the databases under the stall bound, or after stallMsMax.
   */
  admit(): Promise<void> | undefined {
    if (this.total <= this.stallBytes()) return undefined;
    this.stalls++;
    return new Promise((resolve) => {
      const waiting = this.waiting;
      const timer = setTimeout(done, this.options.stallMsMax);
      function done(): void {
        clearTimeout(timer);
        waiting.delete(done);
        resolve();
      }
      waiting.add(done);
    });
  }

  private stallBytes(): number {
    return this.options.bytesMax * this.options.stallFactor;
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
      if (usage > entry.usage) {
        entry.grewAt = now;
        entry.grown = true;
        entry.grownSince ??= now;
      }
      entry.usage = usage;
      total += usage;
    }
    this.total = total;
    if (total <= this.stallBytes()) for (const done of [...this.waiting]) done();
    const { bytesMax, idleFlushMs, ageMsMax } = this.options;
    if (total > bytesMax) {
      const fullest = [...this.tracked].filter((e) => e.flushing === undefined && e.grown).sort((a, b) => b.usage - a.usage);
      for (const entry of fullest) {
        if (total <= bytesMax) break;
        total -= entry.usage;
        this.flush(entry);
      }
    }
    for (const entry of this.tracked) {
      if (entry.flushing !== undefined || !entry.grown) continue;
      const idle = idleFlushMs > 0 && now - entry.grewAt >= idleFlushMs;
      const old = ageMsMax > 0 && now - entry.grownSince! >= ageMsMax;
      if (idle || old) this.flush(entry);
    }
  }

  private flush(entry: Tracked): void {
    this.flushes++;
    entry.grown = false;
    entry.grownSince = undefined;
    entry.flushing = entry.db.compactRange(FLUSH_RANGE_START, FLUSH_RANGE_END)
      // A database closing or reopening (recovery) refuses: its memtable goes with it, or the next sample tries again.
      .catch(() => undefined)
      .then(() => {
        entry.flushing = undefined;
        entry.usage = usageOf(entry.db);
      });
  }
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
