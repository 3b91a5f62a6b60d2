/**
 * Stored documents by ID, in the form `cachedForm` gives (most as their
 * body's JSON text: documents/json-document.ts), least recently used first out, bounded by an
 * estimated byte size (`documentCacheBytesMax`, shared by a node's shard
 * copies through a DocumentCacheBudget). A GET of a hot document is
 * answered from here without touching LevelDB (a LevelDB get crosses to the
 * thread pool: 22k/s awaited one at a time, ENGINE.md).
 *
 * The shard fills it on reads and updates it only once a write's batch is in
 * LevelDB, so it never shows an unacknowledged write. Entries are shared with
 * every caller: nobody may mutate a returned document.
 *
 * Recency is an intrusive doubly linked list (oldest → newest) beside a Map
 * by ID key, so a hit only relinks two pointers. Moving an entry to the back
 * of the Map by delete + set instead ran at 61k hits/s on a 120k-entry Map
 * (V8 keeps deleted entries in the hash chains until the table is rebuilt, so
 * a hot key's chain grows), against 11M/s on a small one.
 */
import type { StoredDocument } from './types.js';

/**
 * Estimated heap bytes of a decoded document from its msgpack record size:
 * decoded heap per msgpack byte measured 1.6× on the Debian records and 0.4×
 * on the accounts sample (Node 20); 2× plus a fixed overhead for the entry,
 * the Map slots and the StoredDocument errs towards the budget.
 */
export function estimateDocumentBytes(recordBytes: number): number {
  return 2 * recordBytes + ENTRY_OVERHEAD_BYTES;
}
const ENTRY_OVERHEAD_BYTES = 160;

/**
 * Estimated heap bytes of a cache entry holding `doc` (a `cachedForm`): a
 * JsonDocument's text at two bytes a character (a string that is not
 * one-byte takes that; a one-byte one half), plus the fixed overhead; a
 * decoded document's from its record size, as above.
 */
export function cachedBytes(doc: StoredDocument, recordBytes: number): number {
  return doc.bodyJson === undefined ? estimateDocumentBytes(recordBytes) : 2 * doc.bodyJson.length + ENTRY_OVERHEAD_BYTES;
}

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

/** An entry of a DocumentCache, linked into its budget's recency order. */
export interface DocumentCacheEntry {
  readonly key: string;
  readonly owner: DocumentCache;
  doc: StoredDocument;
  bytes: number;
  older: DocumentCacheEntry | undefined;
  newer: DocumentCacheEntry | undefined;
}

/**
 * One byte budget and one recency order for every DocumentCache given it:
 * a node's shard copies share one (ShardNode), so the memory of the caches
 * is bounded per process, not per shard copy (5 shards × 3 indexes at 64 MiB
 * each was up to 960 MiB). Past the budget the least recently used entry of
 * any cache goes first, so a busy copy takes the room an idle one is not using.
 */
export class DocumentCacheBudget {
  /** Oldest → newest over all caches of this budget. */
  oldest: DocumentCacheEntry | undefined;
  newest: DocumentCacheEntry | undefined;
  bytesUsed = 0;

  constructor(readonly bytesMax: number) {}

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

  /** Estimated bytes of this cache's entries (the budget's `bytes` counts every cache sharing it). */
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
    if (entry !== this.budget.newest) {
      this.budget.unlink(entry);
      this.budget.append(entry);
    }
    return entry.doc;
  }

  getByDocid(docid: number): StoredDocument | undefined {
    const key = this.keysByDocid.get(docid);
    return key === undefined ? undefined : this.get(key);
  }

  /**
   * Insert or replace; a document larger than the whole budget, or than its
   * share of it (`cacheable`), is not cached.
   * A replaced entry is updated in place (no Map delete + set: see above).
   */
  set(key: string, doc: StoredDocument, bytes: number): void {
    const entry = this.entries.get(key);
    const budget = this.budget;
    if (!cacheable(bytes, budget.bytesMax)) {
      if (entry !== undefined) this.delete(key);
      return;
    }
    if (entry === undefined) {
      const added: DocumentCacheEntry = { key, owner: this, doc, bytes, older: undefined, newer: undefined };
      this.entries.set(key, added);
      budget.append(added);
      this.bytesUsed += bytes;
      budget.bytesUsed += bytes;
    } else {
      if (entry.doc.docid !== doc.docid && this.keysByDocid.get(entry.doc.docid) === key) this.keysByDocid.delete(entry.doc.docid);
      this.bytesUsed += bytes - entry.bytes;
      budget.bytesUsed += bytes - entry.bytes;
      entry.doc = doc;
      entry.bytes = bytes;
      if (entry !== budget.newest) {
        budget.unlink(entry);
        budget.append(entry);
      }
    }
    this.keysByDocid.set(doc.docid, key);
    if (budget.bytesUsed > budget.bytesMax) budget.evict();
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.budget.unlink(entry);
    if (this.keysByDocid.get(entry.doc.docid) === key) this.keysByDocid.delete(entry.doc.docid);
    this.bytesUsed -= entry.bytes;
    this.budget.bytesUsed -= entry.bytes;
  }

  /** Empties this cache (a closed or recovered shard copy); other caches of the budget keep theirs. */
  clear(): void {
    for (const entry of this.entries.values()) this.budget.unlink(entry);
    this.budget.bytesUsed -= this.bytesUsed;
    this.entries.clear();
    this.keysByDocid.clear();
    this.bytesUsed = 0;
  }
}
