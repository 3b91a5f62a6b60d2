/**
 * The compiled-chunk cache (API.md §11.4): least recently used first out,
 * bounded by entries (100 by default), with an optional time to live (none by
 * default). Keyed by the script body, so a changed body is a new entry and
 * parameters never force a recompile. A Map keeps insertion order: a hit is
 * moved to the end, and the first key is the least recently used.
 */

export interface ChunkCacheOptions {
  entriesMax: number;
  /** Entries older than this are compiled again; 0: never. */
  ttlMs: number;
  /** Called with each value leaving the cache (evicted, expired or cleared). */
  release: (value: number) => void;
  /** Clock, ms (tests). */
  now?: () => number;
}

export interface ChunkCacheStats {
  hits: number;
  misses: number;
  evictions: number;
  expirations: number;
  entries: number;
}

interface Entry {
  value: number;
  storedAt: number;
}

export class ChunkCache {
  private readonly entries = new Map<string, Entry>();
  /** The entry inserted or moved last (the end of the Map's order). */
  private newest: Entry | undefined;
  private readonly now: () => number;
  private hits = 0;
  private misses = 0;
  private evictions = 0;
  private expirations = 0;

  constructor(private readonly options: ChunkCacheOptions) {
    if (!Number.isInteger(options.entriesMax) || options.entriesMax < 1) throw new RangeError('entriesMax must be a positive integer');
    if (!(options.ttlMs >= 0)) throw new RangeError('ttlMs must be 0 or more');
    this.now = options.now ?? Date.now;
  }

  /** The cached value for `key`, counted as a hit or a miss. */
  get(key: string): number | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) {
      this.misses++;
      return undefined;
    }
    if (this.options.ttlMs > 0 && this.now() - entry.storedAt >= this.options.ttlMs) {
      this.entries.delete(key);
      this.expirations++;
      this.misses++;
      this.options.release(entry.value);
      return undefined;
    }
    this.hits++;
    // Most recently used goes last (already there when the same script runs again: no reinsertion).
    if (this.newest !== entry) {
      this.entries.delete(key);
      this.entries.set(key, entry);
      this.newest = entry;
    }
    return entry.value;
  }

  set(key: string, value: number): void {
    const previous = this.entries.get(key);
    if (previous !== undefined) {
      this.entries.delete(key);
      this.options.release(previous.value);
    }
    const entry = { value, storedAt: this.now() };
    this.entries.set(key, entry);
    this.newest = entry;
    while (this.entries.size > this.options.entriesMax) {
      const oldest = this.entries.keys().next().value as string;
      const entry = this.entries.get(oldest) as Entry;
      this.entries.delete(oldest);
      this.evictions++;
      this.options.release(entry.value);
    }
  }

  /** Drop every entry without releasing (their engine is gone); counters are kept. */
  forgetAll(): void {
    this.entries.clear();
    this.newest = undefined;
  }

  stats(): ChunkCacheStats {
    return { hits: this.hits, misses: this.misses, evictions: this.evictions, expirations: this.expirations, entries: this.entries.size };
  }
}
