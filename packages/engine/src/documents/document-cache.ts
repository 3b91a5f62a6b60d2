/**
 * Documents by ID, kept as their encoded LevelDB records, least recently used
 * first out, bounded in bytes (`documentCacheBytesMax`, shared by a node's
 * shard copies through a DocumentCacheBudget). A GET of a hot document is
 * answered from here without touching LevelDB (a LevelDB get crosses to the
 * thread pool: 22k/s awaited one at a time, ENGINE.md).
 *
 * The records lie in a few large byte chunks, not as object graphs: the
 * cache once held every document decoded (the document, its body, each of
 * its strings), and under 50 connections of PUT for 30 s the server's old
 * generation grew to 150 MB of them, whose full collections took 120–430 ms
 * of the event loop (docs/operations.md, "Write tails"). Now an entry is one
 * small object of numbers beside its ID key, and a hit decodes its record
 * (new, short-lived objects). The few documents hit last stay decoded
 * (DECODED_ENTRIES_MAX), so a hot document is not decoded on every GET.
 *
 * The shard fills it on reads and updates it only once a write's batch is in
 * LevelDB, so it never shows an unacknowledged write. Returned documents may
 * be shared with other callers: nobody may mutate one.
 *
 * Recency is an intrusive doubly linked list (oldest → newest) beside a Map
 * by ID key, so a hit only relinks two pointers. Moving an entry to the back
 * of the Map by delete + set instead ran at 61k hits/s on a 120k-entry Map
 * (V8 keeps deleted entries in the hash chains until the table is rebuilt, so
 * a hot key's chain grows), against 11M/s on a small one.
 */
import { decodeDocumentRecord } from '../store/records.js';
import type { StoredDocument } from './types.js';

/**
 * Heap bytes an entry costs beside its record: the entry object, its ID key
 * string, and its slots in the Maps by key and by #docid.
 */
export const ENTRY_OVERHEAD_BYTES = 160;

/**
 * The largest entry is this share of the budget (but at least
 * ENTRY_BYTES_FLOOR): one huge document would push out dozens of ordinary
 * ones and keep its memory for as long as it stays. Measured under hostile
 * bodies (scripts/reliability/fuzz-bodies.mjs): accepted 1 MB documents held
 * 42 MB of a 64 MiB cache after the burst. Their reads cost a LevelDB get,
 * which is small beside reading a megabyte.
 */
const ENTRY_BUDGET_SHARE = 1 / 64;
const ENTRY_BYTES_FLOOR = 64 * 1024;

/** Whether an entry of `bytes` may be cached under a budget of `bytesMax`. */
export function cacheable(bytes: number, bytesMax: number): boolean {
  return bytes <= bytesMax && bytes <= Math.max(bytesMax * ENTRY_BUDGET_SHARE, ENTRY_BYTES_FLOOR);
}

/**
 * Records are appended to chunks of this size (or 1/16 of a smaller budget);
 * a record over a quarter of a chunk gets a chunk of its own, so a chunk
 * never wastes more than a quarter at its end.
 */
const CHUNK_BYTES_MAX = 256 * 1024;
/** Budget per chunk: the chunks being emptied by eviction stay a small share of it. */
const CHUNKS_PER_BUDGET_MIN = 16;

/**
 * Documents kept decoded, the ones hit last (each at most
 * DECODED_RECORD_BYTES_MAX encoded): a GET of a hot document returns the
 * same object, as it did when every entry was decoded, and these few objects
 * are all the heap the cache's documents take.
 */
export const DECODED_ENTRIES_MAX = 256;
const DECODED_RECORD_BYTES_MAX = 4096;

/** A byte chunk holding records; freed once no entry points into it. */
interface Chunk {
  readonly bytes: Uint8Array;
  /** Bytes appended so far (the next record goes at this offset). */
  used: number;
  /** Bytes of the records of live entries. */
  live: number;
}

/** An entry of a DocumentCache, linked into its budget's recency order. */
export interface DocumentCacheEntry {
  readonly key: string;
  readonly owner: DocumentCache;
  docid: number;
  chunk: Chunk;
  offset: number;
  length: number;
  /** The decoded document while the entry is among the last hit (DECODED_ENTRIES_MAX). */
  decoded: StoredDocument | undefined;
  older: DocumentCacheEntry | undefined;
  newer: DocumentCacheEntry | undefined;
}

/** The bytes an entry of a record of `recordBytes` counts against its budget. */
export function entryBytes(recordBytes: number): number {
  return recordBytes + ENTRY_OVERHEAD_BYTES;
}

/**
 * One byte budget, one recency order and one set of chunks for every
 * DocumentCache given it: a node's shard copies share one (ShardNode), so the
 * memory of the caches is bounded per process, not per shard copy (5 shards ×
 * 3 indexes at 64 MiB each was up to 960 MiB). Past the budget the least
 * recently used entry of any cache goes first, so a busy copy takes the room
 * an idle one is not using.
 *
 * What counts against the budget is what the cache holds: every chunk whole
 * (the free space at its end and the records of evicted entries included)
 * and each entry's overhead.
 */
export class DocumentCacheBudget {
  /** Oldest → newest over all caches of this budget. */
  oldest: DocumentCacheEntry | undefined;
  newest: DocumentCacheEntry | undefined;
  bytesUsed = 0;
  private readonly chunkBytes: number;
  /** The chunk records are appended to. */
  private current: Chunk | undefined;
  /** Entries holding a decoded document, a ring: the slot reused is the one decoded longest ago. */
  private readonly decoded: Array<DocumentCacheEntry | undefined> = new Array<DocumentCacheEntry | undefined>(DECODED_ENTRIES_MAX).fill(undefined);
  private decodedNext = 0;

  constructor(readonly bytesMax: number) {
    this.chunkBytes = Math.min(CHUNK_BYTES_MAX, Math.floor(bytesMax / CHUNKS_PER_BUDGET_MIN));
  }

  get bytes(): number {
    return this.bytesUsed;
  }

  /** Drops least recently used entries, of whichever cache, until the budget holds. */
  evict(): void {
    while (this.bytesUsed > this.bytesMax && this.oldest !== undefined) this.oldest.owner.delete(this.oldest.key);
  }

  append(entry: DocumentCacheEntry): void {
    entry.older = this.newest;
    entry.newer = undefined;
    if (this.newest === undefined) this.oldest = entry;
    else this.newest.newer = entry;
    this.newest = entry;
  }

  unlink(entry: DocumentCacheEntry): void {
    if (entry.older === undefined) this.oldest = entry.newer;
    else entry.older.newer = entry.newer;
    if (entry.newer === undefined) this.newest = entry.older;
    else entry.newer.older = entry.older;
    entry.older = undefined;
    entry.newer = undefined;
  }

  /** Copies a record into a chunk (counted against the budget); the caller evicts if that passed it. */
  store(record: Uint8Array): { chunk: Chunk; offset: number } {
    const length = record.length;
    let chunk = this.current;
    if (length > this.chunkBytes / 4) {
      chunk = this.newChunk(length);
    } else if (chunk === undefined || chunk.used + length > chunk.bytes.length) {
      chunk = this.current = this.newChunk(this.chunkBytes);
    }
    const offset = chunk.used;
    chunk.bytes.set(record, offset);
    chunk.used += length;
    chunk.live += length;
    return { chunk, offset };
  }

  /** An entry's record is no longer needed: its chunk goes once it holds no live record. */
  release(entry: DocumentCacheEntry): void {
    const chunk = entry.chunk;
    chunk.live -= entry.length;
    if (entry.decoded !== undefined) {
      entry.decoded = undefined;
      const slot = this.decoded.indexOf(entry);
      if (slot >= 0) this.decoded[slot] = undefined;
    }
    if (chunk.live === 0) this.freeChunk(chunk);
  }

  /** The entry's document, decoded from its record unless it was among the last decoded. */
  document(entry: DocumentCacheEntry): StoredDocument {
    if (entry.decoded !== undefined) return entry.decoded;
    const chunk = entry.chunk;
    const doc = decodeDocumentRecord(chunk.bytes.subarray(entry.offset, entry.offset + entry.length));
    if (entry.length <= DECODED_RECORD_BYTES_MAX) {
      const slot = this.decodedNext;
      const previous = this.decoded[slot];
      if (previous !== undefined) previous.decoded = undefined;
      this.decoded[slot] = entry;
      this.decodedNext = (slot + 1) % DECODED_ENTRIES_MAX;
      entry.decoded = doc;
    }
    // A hot entry in a chunk mostly emptied by eviction moves to the current chunk, so that chunk can go.
    if (chunk !== this.current && chunk.live * 2 < chunk.used && entry.length <= this.chunkBytes / 4) this.relocate(entry);
    return doc;
  }

  private relocate(entry: DocumentCacheEntry): void {
    const from = entry.chunk;
    const { chunk, offset } = this.store(from.bytes.subarray(entry.offset, entry.offset + entry.length));
    from.live -= entry.length;
    if (from.live === 0) this.freeChunk(from);
    entry.chunk = chunk;
    entry.offset = offset;
    if (this.bytesUsed > this.bytesMax) this.evict();
  }

  private newChunk(size: number): Chunk {
    this.bytesUsed += size;
    return { bytes: new Uint8Array(size), used: 0, live: 0 };
  }

  private freeChunk(chunk: Chunk): void {
    this.bytesUsed -= chunk.bytes.length;
    if (chunk === this.current) this.current = undefined;
  }
}

export class DocumentCache {
  private readonly entries = new Map<string, DocumentCacheEntry>();
  /** #docid → ID key of cached documents, so a search hit's fetch by docid is a hit too. */
  private readonly keysByDocid = new Map<number, string>();
  private bytesUsed = 0;
  hits = 0;
  misses = 0;
  readonly budget: DocumentCacheBudget;

  /** A budget shared with other caches, or a byte bound of this cache's own. */
  constructor(budget: DocumentCacheBudget | number) {
    this.budget = typeof budget === 'number' ? new DocumentCacheBudget(budget) : budget;
  }

  get bytesMax(): number {
    return this.budget.bytesMax;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Bytes of this cache's entries, records and overhead (the budget's `bytes` counts every cache sharing it, and whole chunks). */
  get bytes(): number {
    return this.bytesUsed;
  }

  get(key: string): StoredDocument | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) {
      this.misses++;
      return undefined;
    }
    return this.hit(entry);
  }

  /** `get` that leaves a miss uncounted: the caller falls back to `get`, which counts it. */
  find(key: string): StoredDocument | undefined {
    const entry = this.entries.get(key);
    return entry === undefined ? undefined : this.hit(entry);
  }

  private hit(entry: DocumentCacheEntry): StoredDocument {
    this.hits++;
    const budget = this.budget;
    if (entry !== budget.newest) {
      budget.unlink(entry);
      budget.append(entry);
    }
    return budget.document(entry);
  }

  getByDocid(docid: number): StoredDocument | undefined {
    const key = this.keysByDocid.get(docid);
    return key === undefined ? undefined : this.get(key);
  }

  /**
   * Insert or replace the document of `key` (#docid `docid`) by its LevelDB
   * record (encodeDocumentRecord's bytes, copied: the caller may reuse them).
   * A record larger than the whole budget, or than its share of it
   * (`cacheable`), is not cached.
   * A replaced entry is updated in place (no Map delete + set: see above).
   */
  set(key: string, docid: number, record: Uint8Array): void {
    let entry = this.entries.get(key);
    const budget = this.budget;
    const bytes = entryBytes(record.length);
    if (!cacheable(bytes, budget.bytesMax)) {
      if (entry !== undefined) this.delete(key);
      return;
    }
    if (entry !== undefined) {
      budget.release(entry);
      this.bytesUsed -= entryBytes(entry.length);
      budget.bytesUsed -= ENTRY_OVERHEAD_BYTES;
      if (entry.docid !== docid && this.keysByDocid.get(entry.docid) === key) this.keysByDocid.delete(entry.docid);
    }
    const { chunk, offset } = budget.store(record);
    if (entry === undefined) {
      entry = { key, owner: this, docid, chunk, offset, length: record.length, decoded: undefined, older: undefined, newer: undefined };
      this.entries.set(key, entry);
      budget.append(entry);
    } else {
      entry.docid = docid;
      entry.chunk = chunk;
      entry.offset = offset;
      entry.length = record.length;
      if (entry !== budget.newest) {
        budget.unlink(entry);
        budget.append(entry);
      }
    }
    this.bytesUsed += bytes;
    budget.bytesUsed += ENTRY_OVERHEAD_BYTES;
    this.keysByDocid.set(docid, key);
    if (budget.bytesUsed > budget.bytesMax) budget.evict();
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.budget.unlink(entry);
    this.budget.release(entry);
    if (this.keysByDocid.get(entry.docid) === key) this.keysByDocid.delete(entry.docid);
    this.bytesUsed -= entryBytes(entry.length);
    this.budget.bytesUsed -= ENTRY_OVERHEAD_BYTES;
  }

  /** Empties this cache (a closed or recovered shard copy); other caches of the budget keep theirs. */
  clear(): void {
    for (const key of [...this.entries.keys()]) this.delete(key);
  }
}
