/**
 * Term → dense id, for the write buffer's dictionary: open addressing with
 * linear probing over typed arrays (Lucene's BytesRefHash idea), keyed by
 * the term's UTF-16 code units.
 *
 * Why not a `Map<string, number>`: the terms the analyzer emits are fresh
 * strings (often concatenations of a prefix and a token), and a Map lookup
 * of such a key cost ~450 ns per token on the Debian corpus, an eighth of
 * bulk indexing. Hashing the code units here and comparing the one
 * candidate's string is about twice as fast and keeps no per-entry objects.
 *
 * The hash (FNV-1a) starts from a per-process random basis, so a client
 * cannot precompute a set of terms that collide (hash flooding).
 */
import { randomInt } from 'node:crypto';

const FNV_PRIME = 16777619;
const BASIS = randomInt(0x7fffffff) | 0;
const INITIAL_SLOTS = 1 << 12;

/** The term's hash (the table's probe start and stored check). */
function hashOf(term: string): number {
  let h = BASIS;
  for (let i = 0; i < term.length; i++) h = Math.imul(h ^ term.charCodeAt(i), FNV_PRIME);
  return h;
}

export class TermHash {
  /** Id → term, in id order. */
  readonly names: string[] = [];
  /** Slot → id + 1 (0: empty). */
  private slots = new Int32Array(INITIAL_SLOTS);
  /** Slot → hash of its term (compared before the strings). */
  private hashes = new Int32Array(INITIAL_SLOTS);
  private mask = INITIAL_SLOTS - 1;

  get size(): number {
    return this.names.length;
  }

  /** Bytes of the table itself (the term strings are the caller's to count). */
  get byteLength(): number {
    return this.slots.byteLength + this.hashes.byteLength;
  }

  /** The id of `term`, or −1. */
  find(term: string): number {
    const h = hashOf(term);
    const slots = this.slots;
    const hashes = this.hashes;
    const mask = this.mask;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const entry = slots[i]!;
      if (entry === 0) return -1;
      if (hashes[i] === h && this.names[entry - 1] === term) return entry - 1;
    }
  }

  /** The id of `term`, added (as the next id) when absent; `added` tells which. */
  idOf(term: string): number {
    const h = hashOf(term);
    const slots = this.slots;
    const hashes = this.hashes;
    const mask = this.mask;
    let i = h & mask;
    for (; ; i = (i + 1) & mask) {
      const entry = slots[i]!;
      if (entry === 0) break;
      if (hashes[i] === h && this.names[entry - 1] === term) {
        this.added = false;
        return entry - 1;
      }
    }
    const id = this.names.length;
    this.names.push(term);
    slots[i] = id + 1;
    hashes[i] = h;
    // Load ≤ ½ keeps probe runs short.
    if (2 * this.names.length > slots.length) this.rehash(slots.length * 2);
    this.added = true;
    return id;
  }

  /** Whether the last `idOf` added its term. */
  added = false;

  private rehash(size: number): void {
    const oldSlots = this.slots;
    const oldHashes = this.hashes;
    const slots = new Int32Array(size);
    const hashes = new Int32Array(size);
    const mask = size - 1;
    for (let k = 0; k < oldSlots.length; k++) {
      const entry = oldSlots[k]!;
      if (entry === 0) continue;
      const h = oldHashes[k]!;
      let i = h & mask;
      while (slots[i] !== 0) i = (i + 1) & mask;
      slots[i] = entry;
      hashes[i] = h;
    }
    this.slots = slots;
    this.hashes = hashes;
    this.mask = mask;
  }
}
