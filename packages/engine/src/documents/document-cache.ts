/**
 * Documents by ID, kept as their encoded LevelDB records, least recently used
 * first out, bounded in bytes (`documentCacheBytesMax`, shared by a node's
 * shard copies through a DocumentCacheBudget). A GET of a hot document is
 * answered from here without touching LevelDB (a LevelDB get crosses to the
 * thread pool: 22k/s awaited one at a time, ENGINE.md).
 *
 * Nothing of an entry is a JavaScript object: its ID key and record lie in
 * large byte chunks, and its place in the hash tables and the recency order
 * is a slot of typed arrays. The cache once held every document decoded
 * (entry, document, body, each string) and a Map entry and a key string per
 * document beside it: under 50 connections of PUT for 30 s the server's old
 * generation grew to 150 MB, and its full collections took 120–430 ms of the
 * event loop (docs/operations.md, "Write tails"); with encoded records in
 * chunks but an object and a key per entry, still ~310 bytes of heap per
 * entry (63 MB for 64 MiB of small documents). Now the cache adds no objects
 * for the collector to mark, whatever it holds. A hit decodes its record
 * (new, short-lived objects, ~2.5 µs for a 160-byte record); the few
 * documents hit last stay decoded (DECODED_ENTRIES_MAX), so a hot document
 * is not decoded on every GET.
 *
 * The shard fills it on reads and updates it only once a write's batch is in
 * LevelDB, so it never shows an unacknowledged write. Returned documents may
 * be shared with other callers: nobody may mutate one.
 */
import { decodeDocumentRecord } from '../store/records.js';
import type { StoredDocument } from './types.js';

/**
 * Bytes an entry costs beside its key and record: its slot in the typed
 * arrays (ten 4-byte fields and a docid) and its two hash buckets, twice
 * over since the arrays grow by doubling.
 */
export const ENTRY_OVERHEAD_BYTES = 128;

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

/** The bytes an entry counts against its budget. */
export function entryBytes(keyBytes: number, recordBytes: number): number {
  return keyBytes + recordBytes + ENTRY_OVERHEAD_BYTES;
}

/**
 * Keys and records are appended to chunks of this size (or 1/16 of a smaller
 * budget); an entry over a quarter of a chunk gets a chunk of its own, so a
 * chunk never wastes more than a quarter at its end.
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

const NONE = -1;
const SLOTS_INITIAL = 1024;

/** A byte chunk holding keys and records; freed once no entry points into it. */
interface Chunk {
  readonly bytes: Buffer;
  /** Bytes appended so far (the next entry goes at this offset). */
  used: number;
  /** Bytes of the keys and records of live entries. */
  live: number;
}

/** FNV-1a over bytes, mixed with the owning cache's number. */
function hashKey(bytes: Uint8Array, length: number, owner: number): number {
  let h = 0x811c9dc5 ^ owner;
  for (let i = 0; i < length; i++) h = Math.imul(h ^ (bytes[i] as number), 0x01000193);
  return h >>> 0;
}

function hashDocid(docid: number, owner: number): number {
  return (Math.imul(docid ^ Math.imul(owner, 0x9e3779b1), 0x85ebca6b) ^ (docid >>> 13)) >>> 0;
}

/**
 * One byte budget, one recency order, one set of chunks and one table of
 * entries for every DocumentCache given it: a node's shard copies share one
 * (ShardNode), so the memory of the caches is bounded per process, not per
 * shard copy (5 shards × 3 indexes at 64 MiB each was up to 960 MiB). Past
 * the budget the least recently used entry of any cache goes first, so a busy
 * copy takes the room an idle one is not using.
 *
 * What counts against the budget is what the cache holds: every chunk whole
 * (the free space at its end and the records of evicted entries included)
 * and each entry's overhead.
 *
 * Entries are slots: parallel typed arrays indexed by slot number, linked into
 * a chain per key bucket and per docid bucket, and into the recency list
 * (oldest → newest). Free slots are chained through `next`.
 */
export class DocumentCacheBudget {
  bytesUsed = 0;
  private readonly chunkBytes: number;
  /** Chunks by number (a slot names its chunk by number); freed numbers are reused. */
  private readonly chunks: Array<Chunk | undefined> = [];
  private readonly freeChunks: number[] = [];
  /** The chunk number entries are appended to, or NONE. */
  private current = NONE;
  private readonly owners: DocumentCache[] = [];

  private capacity = 0;
  /** Owning cache's number, NONE for a free slot. */
  private owner: Int32Array = new Int32Array(0);
  private chunk: Int32Array = new Int32Array(0);
  /** Offset of the key in its chunk; the record follows it. */
  private offset: Int32Array = new Int32Array(0);
  private keyLength: Int32Array = new Int32Array(0);
  private recordLength: Int32Array = new Int32Array(0);
  private docid: Int32Array = new Int32Array(0);
  private hash: Uint32Array = new Uint32Array(0);
  /** Next slot in the key bucket's chain (or in the free list). */
  private next: Int32Array = new Int32Array(0);
  private docidNext: Int32Array = new Int32Array(0);
  private older: Int32Array = new Int32Array(0);
  private newer: Int32Array = new Int32Array(0);
  /** 1 + the decoded ring's index holding the slot's document, 0 when not decoded. */
  private decodedAt: Int32Array = new Int32Array(0);
  private keyBuckets: Int32Array = new Int32Array(0);
  private docidBuckets: Int32Array = new Int32Array(0);
  private freeSlot = NONE;
  private oldest = NONE;
  private newest = NONE;

  /** The last decoded documents (a ring: the index reused is the one decoded longest ago) and their slots. */
  private readonly decodedDocs: Array<StoredDocument | undefined> = new Array<StoredDocument | undefined>(DECODED_ENTRIES_MAX).fill(undefined);
  private readonly decodedSlots = new Int32Array(DECODED_ENTRIES_MAX).fill(NONE);
  private decodedNext = 0;

  /** UTF-8 of the key looked up last (grown as needed), its length and hash. */
  private scratch = Buffer.allocUnsafe(256);
  private readonly lookedUp = { keyLength: 0, hash: 0 };

  constructor(readonly bytesMax: number) {
    this.chunkBytes = Math.min(CHUNK_BYTES_MAX, Math.floor(bytesMax / CHUNKS_PER_BUDGET_MIN));
  }

  get bytes(): number {
    return this.bytesUsed;
  }

  /** A number for a cache of this budget (its entries carry it). */
  register(cache: DocumentCache): number {
    this.owners.push(cache);
    return this.owners.length - 1;
  }

  /** The UTF-8 of `key` in `scratch`; its length. */
  private encodeKey(key: string): number {
    if (this.scratch.length < key.length * 3) this.scratch = Buffer.allocUnsafe(key.length * 3);
    return this.scratch.write(key, 0, 'utf8');
  }

  /** The slot of `key` in cache `owner`, or NONE. Leaves the key's UTF-8 in `scratch`, its length and hash in `lookedUp`. */
  find(owner: number, key: string): number {
    const length = this.encodeKey(key);
    const h = hashKey(this.scratch, length, owner);
    this.lookedUp.keyLength = length;
    this.lookedUp.hash = h;
    if (this.capacity === 0) return NONE;
    for (let s = this.keyBuckets[h & (this.keyBuckets.length - 1)] as number; s !== NONE; s = this.next[s] as number) {
      if (this.hash[s] !== h || this.owner[s] !== owner || this.keyLength[s] !== length) continue;
      const chunk = this.chunks[this.chunk[s] as number] as Chunk;
      const at = this.offset[s] as number;
      if (chunk.bytes.compare(this.scratch, 0, length, at, at + length) === 0) return s;
    }
    return NONE;
  }

  /** The slot of #docid `docid` in cache `owner`, or NONE. */
  findDocid(owner: number, docid: number): number {
    if (this.capacity === 0) return NONE;
    const h = hashDocid(docid, owner);
    for (let s = this.docidBuckets[h & (this.docidBuckets.length - 1)] as number; s !== NONE; s = this.docidNext[s] as number) {
      if (this.docid[s] === docid && this.owner[s] === owner) return s;
    }
    return NONE;
  }

  /** Makes the slot the most recently used. */
  touch(s: number): void {
    if (s === this.newest) return;
    this.unlink(s);
    this.append(s);
  }

  /** The slot's document, decoded from its record unless it was among the last decoded. */
  document(s: number): StoredDocument {
    const at = this.decodedAt[s] as number;
    if (at !== 0) return this.decodedDocs[at - 1] as StoredDocument;
    const chunkNumber = this.chunk[s] as number;
    const chunk = this.chunks[chunkNumber] as Chunk;
    const start = (this.offset[s] as number) + (this.keyLength[s] as number);
    const length = this.recordLength[s] as number;
    const doc = decodeDocumentRecord(chunk.bytes.subarray(start, start + length));
    if (length <= DECODED_RECORD_BYTES_MAX) {
      const ring = this.decodedNext;
      const previous = this.decodedSlots[ring] as number;
      if (previous !== NONE) this.decodedAt[previous] = 0;
      this.decodedSlots[ring] = s;
      this.decodedDocs[ring] = doc;
      this.decodedAt[s] = ring + 1;
      this.decodedNext = (ring + 1) % DECODED_ENTRIES_MAX;
    }
    // A hot entry in a chunk mostly emptied by eviction moves to the current chunk, so that chunk can go.
    const bytes = (this.keyLength[s] as number) + length;
    if (chunkNumber !== this.current && chunk.live * 2 < chunk.used && bytes <= this.chunkBytes / 4) this.relocate(s, bytes);
    return doc;
  }

  /**
   * Inserts or replaces the entry of `key` in cache `owner`; one not
   * `cacheable` is dropped instead.
   */
  set(owner: number, key: string, docid: number, record: Uint8Array): void {
    let s = this.find(owner, key);
    const { keyLength, hash: h } = this.lookedUp;
    if (!cacheable(entryBytes(keyLength, record.length), this.bytesMax)) {
      if (s !== NONE) this.remove(s);
      return;
    }
    const cache = this.owners[owner] as DocumentCache;
    const added = s === NONE;
    if (added) {
      s = this.allocateSlot();
      this.owner[s] = owner;
      this.hash[s] = h;
      const bucket = h & (this.keyBuckets.length - 1);
      this.next[s] = this.keyBuckets[bucket] as number;
      this.keyBuckets[bucket] = s;
      this.docid[s] = docid;
      this.linkDocid(s);
      this.append(s);
      this.bytesUsed += ENTRY_OVERHEAD_BYTES;
    } else {
      cache.bytesUsed -= entryBytes(keyLength, this.recordLength[s] as number);
      this.releaseBytes(s);
      if (this.docid[s] !== docid) {
        this.unlinkDocid(s);
        this.docid[s] = docid;
        this.linkDocid(s);
      }
      this.touch(s);
    }
    // A #docid is one document's in a shard copy: an entry of another key with it is stale.
    for (let other = this.docidBuckets[hashDocid(docid, owner) & (this.docidBuckets.length - 1)] as number; other !== NONE;) {
      const following = this.docidNext[other] as number;
      if (other !== s && this.docid[other] === docid && this.owner[other] === owner) this.remove(other);
      other = following;
    }
    const { chunkNumber, offset } = this.place(keyLength + record.length);
    const chunk = this.chunks[chunkNumber] as Chunk;
    this.scratch.copy(chunk.bytes, offset, 0, keyLength);
    chunk.bytes.set(record, offset + keyLength);
    this.chunk[s] = chunkNumber;
    this.offset[s] = offset;
    this.keyLength[s] = keyLength;
    this.recordLength[s] = record.length;
    if (added) cache.size++;
    cache.bytesUsed += entryBytes(keyLength, record.length);
    this.evict();
  }

  /** Removes the slot's entry from its cache. */
  remove(s: number): void {
    const cache = this.owners[this.owner[s] as number] as DocumentCache;
    cache.size--;
    cache.bytesUsed -= entryBytes(this.keyLength[s] as number, this.recordLength[s] as number);
    this.releaseBytes(s);
    this.unlink(s);
    this.unlinkDocid(s);
    const bucket = (this.hash[s] as number) & (this.keyBuckets.length - 1);
    let at = this.keyBuckets[bucket] as number;
    if (at === s) this.keyBuckets[bucket] = this.next[s] as number;
    else {
      while (this.next[at] !== s) at = this.next[at] as number;
      this.next[at] = this.next[s] as number;
    }
    this.owner[s] = NONE;
    this.next[s] = this.freeSlot;
    this.freeSlot = s;
    this.bytesUsed -= ENTRY_OVERHEAD_BYTES;
  }

  /** Removes every entry of cache `owner`. */
  clear(owner: number): void {
    for (let s = 0; s < this.capacity; s++) if (this.owner[s] === owner) this.remove(s);
  }

  /** Drops least recently used entries, of whichever cache, until the budget holds. */
  private evict(): void {
    while (this.bytesUsed > this.bytesMax && this.oldest !== NONE) this.remove(this.oldest);
  }

  /** The slot's key and record no longer need their bytes (nor its decoded document its ring place). */
  private releaseBytes(s: number): void {
    const chunkNumber = this.chunk[s] as number;
    const chunk = this.chunks[chunkNumber] as Chunk;
    chunk.live -= (this.keyLength[s] as number) + (this.recordLength[s] as number);
    if (chunk.live === 0) this.freeChunk(chunkNumber);
    const at = this.decodedAt[s] as number;
    if (at !== 0) {
      this.decodedAt[s] = 0;
      this.decodedSlots[at - 1] = NONE;
      this.decodedDocs[at - 1] = undefined;
    }
  }

  private relocate(s: number, bytes: number): void {
    const fromNumber = this.chunk[s] as number;
    const from = this.chunks[fromNumber] as Chunk;
    const start = this.offset[s] as number;
    const { chunkNumber, offset } = this.place(bytes);
    const to = this.chunks[chunkNumber] as Chunk;
    from.bytes.copy(to.bytes, offset, start, start + bytes);
    from.live -= bytes;
    if (from.live === 0) this.freeChunk(fromNumber);
    this.chunk[s] = chunkNumber;
    this.offset[s] = offset;
    this.evict();
  }

  /** Room for `bytes` (counted live): in the current chunk, a new one, or a chunk of its own when large. */
  private place(bytes: number): { chunkNumber: number; offset: number } {
    let chunkNumber = this.current;
    if (bytes > this.chunkBytes / 4) chunkNumber = this.newChunk(bytes);
    else if (chunkNumber === NONE || (this.chunks[chunkNumber] as Chunk).used + bytes > this.chunkBytes) chunkNumber = this.current = this.newChunk(this.chunkBytes);
    const chunk = this.chunks[chunkNumber] as Chunk;
    const offset = chunk.used;
    chunk.used += bytes;
    chunk.live += bytes;
    return { chunkNumber, offset };
  }

  private newChunk(size: number): number {
    this.bytesUsed += size;
    const chunk: Chunk = { bytes: Buffer.allocUnsafeSlow(size), used: 0, live: 0 };
    const reused = this.freeChunks.pop();
    if (reused !== undefined) {
      this.chunks[reused] = chunk;
      return reused;
    }
    this.chunks.push(chunk);
    return this.chunks.length - 1;
  }

  private freeChunk(chunkNumber: number): void {
    this.bytesUsed -= (this.chunks[chunkNumber] as Chunk).bytes.length;
    this.chunks[chunkNumber] = undefined;
    this.freeChunks.push(chunkNumber);
    if (chunkNumber === this.current) this.current = NONE;
  }

  private append(s: number): void {
    this.older[s] = this.newest;
    this.newer[s] = NONE;
    if (this.newest === NONE) this.oldest = s;
    else this.newer[this.newest] = s;
    this.newest = s;
  }

  private unlink(s: number): void {
    const older = this.older[s] as number;
    const newer = this.newer[s] as number;
    if (older === NONE) this.oldest = newer;
    else this.newer[older] = newer;
    if (newer === NONE) this.newest = older;
    else this.older[newer] = older;
  }

  private linkDocid(s: number): void {
    const bucket = hashDocid(this.docid[s] as number, this.owner[s] as number) & (this.docidBuckets.length - 1);
    this.docidNext[s] = this.docidBuckets[bucket] as number;
    this.docidBuckets[bucket] = s;
  }

  private unlinkDocid(s: number): void {
    const bucket = hashDocid(this.docid[s] as number, this.owner[s] as number) & (this.docidBuckets.length - 1);
    let at = this.docidBuckets[bucket] as number;
    if (at === s) {
      this.docidBuckets[bucket] = this.docidNext[s] as number;
      return;
    }
    while (this.docidNext[at] !== s) at = this.docidNext[at] as number;
    this.docidNext[at] = this.docidNext[s] as number;
  }

  private allocateSlot(): number {
    if (this.freeSlot === NONE) this.grow();
    const s = this.freeSlot;
    this.freeSlot = this.next[s] as number;
    return s;
  }

  /** Doubles the slots and the buckets (one bucket per slot), rehashing the live slots. */
  private grow(): void {
    const old = this.capacity;
    const capacity = old === 0 ? SLOTS_INITIAL : old * 2;
    const widen = (array: Int32Array): Int32Array => {
      const wider = new Int32Array(capacity);
      wider.set(array);
      return wider;
    };
    this.owner = widen(this.owner);
    this.owner.fill(NONE, old);
    this.chunk = widen(this.chunk);
    this.offset = widen(this.offset);
    this.keyLength = widen(this.keyLength);
    this.recordLength = widen(this.recordLength);
    this.docid = widen(this.docid);
    const hash = new Uint32Array(capacity);
    hash.set(this.hash);
    this.hash = hash;
    this.next = widen(this.next);
    this.docidNext = widen(this.docidNext);
    this.older = widen(this.older);
    this.newer = widen(this.newer);
    this.decodedAt = widen(this.decodedAt);
    this.keyBuckets = new Int32Array(capacity).fill(NONE);
    this.docidBuckets = new Int32Array(capacity).fill(NONE);
    this.capacity = capacity;
    for (let s = 0; s < old; s++) {
      if (this.owner[s] === NONE) continue;
      const bucket = (this.hash[s] as number) & (capacity - 1);
      this.next[s] = this.keyBuckets[bucket] as number;
      this.keyBuckets[bucket] = s;
      this.linkDocid(s);
    }
    // The new slots, and the old free ones, make the free list again.
    this.freeSlot = NONE;
    for (let s = capacity - 1; s >= 0; s--) {
      if (this.owner[s] !== NONE) continue;
      this.next[s] = this.freeSlot;
      this.freeSlot = s;
    }
  }
}

export class DocumentCache {
  /** Maintained by the budget. */
  size = 0;
  /** Bytes of this cache's entries, keys, records and overhead (maintained by the budget). */
  bytesUsed = 0;
  hits = 0;
  misses = 0;
  readonly budget: DocumentCacheBudget;
  private readonly number: number;

  /** A budget shared with other caches, or a byte bound of this cache's own. */
  constructor(budget: DocumentCacheBudget | number) {
    this.budget = typeof budget === 'number' ? new DocumentCacheBudget(budget) : budget;
    this.number = this.budget.register(this);
  }

  get bytesMax(): number {
    return this.budget.bytesMax;
  }

  /** Estimated bytes of this cache's entries (the budget's `bytes` counts every cache sharing it, and whole chunks). */
  get bytes(): number {
    return this.bytesUsed;
  }

  get(key: string): StoredDocument | undefined {
    const s = this.budget.find(this.number, key);
    if (s === NONE) {
      this.misses++;
      return undefined;
    }
    return this.hit(s);
  }

  /** `get` that leaves a miss uncounted: the caller falls back to `get`, which counts it. */
  find(key: string): StoredDocument | undefined {
    const s = this.budget.find(this.number, key);
    return s === NONE ? undefined : this.hit(s);
  }

  private hit(s: number): StoredDocument {
    this.hits++;
    this.budget.touch(s);
    return this.budget.document(s);
  }

  getByDocid(docid: number): StoredDocument | undefined {
    const s = this.budget.findDocid(this.number, docid);
    return s === NONE ? undefined : this.hit(s);
  }

  /**
   * Insert or replace the document of `key` (#docid `docid`) by its LevelDB
   * record (encodeDocumentRecord's bytes, copied: the caller may reuse them).
   * A record larger than the whole budget, or than its share of it
   * (`cacheable`), is not cached.
   */
  set(key: string, docid: number, record: Uint8Array): void {
    this.budget.set(this.number, key, docid, record);
  }

  delete(key: string): void {
    const s = this.budget.find(this.number, key);
    if (s !== NONE) this.budget.remove(s);
  }

  /** Empties this cache (a closed or recovered shard copy); other caches of the budget keep theirs. */
  clear(): void {
    this.budget.clear(this.number);
  }
}
