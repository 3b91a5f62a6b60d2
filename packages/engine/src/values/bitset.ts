/**
 * A fixed-size bitset over segment ordinals (or any dense 0-based index):
 * range scans write matches into one, live docs are one, and filters combine
 * them word by word. 32 bits per Uint32Array word.
 */
import assert from 'node:assert/strict';

export class Bitset {
  readonly words: Uint32Array;

  constructor(readonly size: number, words?: Uint32Array) {
    assert.ok(Number.isInteger(size) && size >= 0, 'bitset size must be a non-negative integer');
    const n = (size + 31) >>> 5;
    if (words !== undefined) assert.ok(words.length >= n, 'bitset words too short');
    this.words = words ?? new Uint32Array(n);
  }

  /** A bitset of `size` over little-endian bytes as `toBytes` writes them (copied). */
  static fromBytes(size: number, bytes: Uint8Array): Bitset {
    const set = new Bitset(size);
    const view = new Uint8Array(set.words.buffer, set.words.byteOffset, set.words.byteLength);
    view.set(bytes.subarray(0, view.length));
    return set;
  }

  has(i: number): boolean {
    return (this.words[i >>> 5]! & (1 << (i & 31))) !== 0;
  }

  add(i: number): void {
    this.words[i >>> 5] = this.words[i >>> 5]! | (1 << (i & 31));
  }

  remove(i: number): void {
    this.words[i >>> 5] = this.words[i >>> 5]! & ~(1 << (i & 31));
  }

  clear(): void {
    this.words.fill(0);
  }

  /** Set every bit in [0, size). */
  fill(): void {
    this.words.fill(0xffffffff);
    const extra = this.size & 31;
    if (extra !== 0) this.words[this.words.length - 1] = (1 << extra) - 1;
  }

  count(): number {
    let total = 0;
    const words = this.words;
    for (let i = 0; i < words.length; i++) {
      let v = words[i]!;
      v -= (v >>> 1) & 0x55555555;
      v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
      total += (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
    }
    return total;
  }

  /** First set bit ≥ from, or −1. */
  nextSetBit(from: number): number {
    if (from >= this.size) return -1;
    const words = this.words;
    let w = from >>> 5;
    let word = words[w]! & (0xffffffff << (from & 31));
    while (word === 0) {
      if (++w >= words.length) return -1;
      word = words[w]!;
    }
    const bit = (w << 5) + (31 - Math.clz32(word & -word));
    return bit < this.size ? bit : -1;
  }

  /** `this &= other` (same size). */
  and(other: Bitset): void {
    assert.equal(other.size, this.size, 'bitset sizes differ');
    for (let i = 0; i < this.words.length; i++) this.words[i] = this.words[i]! & other.words[i]!;
  }

  /** `this &= ~other` (same size). */
  andNot(other: Bitset): void {
    assert.equal(other.size, this.size, 'bitset sizes differ');
    for (let i = 0; i < this.words.length; i++) this.words[i] = this.words[i]! & ~other.words[i]!;
  }

  copy(): Bitset {
    return new Bitset(this.size, this.words.slice());
  }

  /** Little-endian bytes of the words (a copy), ((size + 31) >> 5) × 4 long. */
  toBytes(): Uint8Array {
    return new Uint8Array(this.words.buffer.slice(this.words.byteOffset, this.words.byteOffset + this.words.byteLength));
  }
}
