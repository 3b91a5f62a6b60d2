/**
 * Decoded postings of long lists, cached under a byte budget (ENGINE.md:
 * "decoded postings are cached under a byte budget"). A segment never
 * changes, so a list decoded once (ordinals, docids, frequencies) serves
 * every later query on that term by copying blocks instead of bit-unpacking
 * and mapping ordinals to docids again. Least recently used lists are
 * evicted first. One cache per process: the budget is the process's.
 */
export interface DecodedPostings {
  readonly ordinals: Uint32Array;
  readonly docids: Uint32Array;
  readonly freqs: Uint32Array;
}

/** Lists shorter than this decode fast enough: not cached. */
export const POSTINGS_CACHE_DF_MIN = 1024;
export const POSTINGS_CACHE_BYTES_DEFAULT = 64 * 1024 * 1024;

export class PostingsCache {
  private readonly entries = new Map<string, DecodedPostings>();
  private bytesUsed = 0;
  hits = 0;
  misses = 0;
  evictions = 0;

  constructor(private budgetBytes: number) {}

  get bytes(): number {
    return this.bytesUsed;
  }

  get budget(): number {
    return this.budgetBytes;
  }

  /** Change the budget (0 disables the cache); evicts down to it. */
  setBudget(bytes: number): void {
    this.budgetBytes = Math.max(0, bytes);
    this.evict();
  }

  get(key: string): DecodedPostings | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) {
      this.misses++;
      return undefined;
    }
    // Most recently used last (Map keeps insertion order).
    this.entries.delete(key);
    this.entries.set(key, entry);
    this.hits++;
    return entry;
  }

  put(key: string, postings: DecodedPostings): void {
    const size = sizeOf(postings);
    // One list may not take more than an eighth of the budget: a huge list would flush the rest.
    if (size > this.budgetBytes / 8) return;
    const old = this.entries.get(key);
    if (old !== undefined) this.bytesUsed -= sizeOf(old);
    this.entries.delete(key);
    this.entries.set(key, postings);
    this.bytesUsed += size;
    this.evict();
  }

  private evict(): void {
    for (const [key, entry] of this.entries) {
      if (this.bytesUsed <= this.budgetBytes) return;
      this.entries.delete(key);
      this.bytesUsed -= sizeOf(entry);
      this.evictions++;
    }
  }
}

function sizeOf(p: DecodedPostings): number {
  return p.ordinals.byteLength + p.docids.byteLength + p.freqs.byteLength;
}

/** The process's cache of decoded postings. */
export const postingsCache = new PostingsCache(POSTINGS_CACHE_BYTES_DEFAULT);
