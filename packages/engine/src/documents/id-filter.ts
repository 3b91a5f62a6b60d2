/**
 * Which document IDs a shard copy may hold: a Bloom filter over the ID key
 * of every document it stores, so that a write of a new ID can skip the
 * LevelDB read of its (absent) current version. Under 50 connections of PUT
 * of new string IDs that read was 13 % of the event loop's samples, mostly
 * the thread pool's thread taking the shared core (docs/operations.md,
 * "Write tails").
 *
 * "No" is certain, "maybe" is not (then the write reads, as without the
 * filter). Keys are added, never removed (a deleted document's ID stays a
 * "maybe"): the shard adds a put's key before its batch is written
 * (shard/batch.ts), so LevelDB never holds a document the filter has not
 * seen; the IDs already stored when the copy opens are read into it in the
 * background (`fill`), and until then every answer is "maybe".
 *
 * Scalable (Almeida et al.): a part of twice the capacity is added when the
 * last one is full, so the filter needs no rebuild and no count up front;
 * each part has IDS_FILTER_BITS_PER_KEY bits per key and HASHES probes (a
 * false "maybe" ~0.3 % of the time per part).
 */
import type { DocumentId } from './types.js';
import { documentIdKey } from './document-id.js';

export const ID_FILTER_BITS_PER_KEY = 12;
const HASHES = 8;
const PART_KEYS_MIN = 16 * 1024;

interface Part {
  readonly bits: Uint32Array;
  /** Bit count − 1 (a power of two − 1). */
  readonly mask: number;
  readonly capacity: number;
  count: number;
}

function part(capacity: number): Part {
  let bitCount = 32;
  while (bitCount < capacity * ID_FILTER_BITS_PER_KEY) bitCount *= 2;
  return { bits: new Uint32Array(bitCount / 32), mask: bitCount - 1, capacity, count: 0 };
}

export class IdFilter {
  private readonly parts: Part[];
  /** Every stored ID has been added: a "no" is certain. */
  private complete = false;

  /** `expected`: about how many documents the copy holds (the first part's size). */
  constructor(expected = 0) {
    this.parts = [part(Math.max(PART_KEYS_MIN, 2 * expected))];
  }

  get ready(): boolean {
    return this.complete;
  }

  /** Every ID the copy stores has been added (at open: an empty copy, or `fill` done). */
  markComplete(): void {
    this.complete = true;
  }

  /** Bytes of the bit arrays. */
  get bytes(): number {
    let bytes = 0;
    for (const p of this.parts) bytes += p.bits.byteLength;
    return bytes;
  }

  add(key: string): void {
    let last = this.parts[this.parts.length - 1] as Part;
    if (last.count >= last.capacity) {
      last = part(last.capacity * 2);
      this.parts.push(last);
    }
    hash(key);
    for (let i = 0; i < HASHES; i++) {
      const bit = (hash1 + Math.imul(i, hash2)) & last.mask;
      last.bits[bit >>> 5] = (last.bits[bit >>> 5] as number) | (1 << (bit & 31));
    }
    last.count++;
  }

  /** False only when no document of this ID key was ever stored (and the filter is complete). */
  mayHave(key: string): boolean {
    if (!this.complete) return true;
    hash(key);
    for (const p of this.parts) {
      let all = true;
      for (let i = 0; i < HASHES && all; i++) {
        const bit = (hash1 + Math.imul(i, hash2)) & p.mask;
        all = ((p.bits[bit >>> 5] as number) & (1 << (bit & 31))) !== 0;
      }
      if (all) return true;
    }
    return false;
  }

  /**
   * Adds the IDs of `batches` (the copy's stored documents, read from
   * LevelDB while writes go on and add theirs) and then marks the filter
   * complete; stops, incomplete, at the first error or once `stopped()`.
   */
  async fill(batches: AsyncIterable<readonly DocumentId[]>, stopped: () => boolean): Promise<void> {
    for await (const ids of batches) {
      if (stopped()) return;
      for (const id of ids) this.add(documentIdKey(id));
    }
    if (!stopped()) this.complete = true;
  }
}

/** The last key's two 32-bit hashes (double hashing: the second odd), set by `hash`. */
let hash1 = 0;
let hash2 = 1;

/** Hashes a key's UTF-16 code units into hash1 and hash2. */
function hash(key: string): void {
  let h1 = 0x811c9dc5;
  let h2 = 0x9747b28c;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    h2 ^= h2 >>> 15;
  }
  h1 ^= h1 >>> 16;
  h1 = Math.imul(h1, 0x85ebca6b);
  h1 ^= h1 >>> 13;
  hash1 = h1 | 0;
  hash2 = h2 | 1;
}
