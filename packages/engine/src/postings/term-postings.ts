/**
 * In-memory postings of one term in the write buffer: growable typed arrays
 * (ordinals, frequencies, positions), appended as documents are added, never
 * an object per posting. Buffer ordinals are assigned in add order, so they
 * ascend within every list.
 */
import assert from 'node:assert/strict';

const INITIAL_POSTINGS = 2;
const INITIAL_POSITIONS = 4;

export class TermPostings {
  ordinals: Uint32Array = new Uint32Array(INITIAL_POSTINGS);
  freqs: Uint32Array = new Uint32Array(INITIAL_POSTINGS);
  /** Concatenated positions of every posting, `freqs[i]` of them for posting i (when `hasPositions`). */
  positions: Uint32Array = EMPTY;
  count = 0;
  positionsLength = 0;
  /**
   * Whether every posting came with positions. A posting without them turns
   * positions off for the whole term (the schema decides per field, so a mix
   * only follows a schema change); they are then dropped at flush.
   */
  hasPositions: boolean;

  constructor(hasPositions: boolean) {
    this.hasPositions = hasPositions;
  }

  /**
   * Append one document (ordinals must ascend). `positions[start .. start + freq)` when given.
   * Returns the bytes the arrays grew by (the write buffer's running estimate;
   * reading three byteLengths per posting instead cost 15% of add time).
   */
  add(ordinal: number, freq: number, positions: ArrayLike<number> | null, start: number): number {
    const n = this.count;
    assert.ok(n === 0 || ordinal > this.ordinals[n - 1]!, 'buffer ordinals must ascend within a term');
    let grown = 0;
    if (n === this.ordinals.length) {
      this.ordinals = grow32(this.ordinals, n * 2);
      this.freqs = grow32(this.freqs, n * 2);
      grown += n * 8;
    }
    this.ordinals[n] = ordinal;
    this.freqs[n] = freq;
    this.count = n + 1;
    if (positions === null) {
      grown -= this.positions.byteLength;
      this.hasPositions = false;
      this.positions = EMPTY;
      this.positionsLength = 0;
      return grown;
    }
    if (!this.hasPositions) return grown;
    let p = this.positionsLength;
    if (p + freq > this.positions.length) {
      const before = this.positions.byteLength;
      this.positions = grow32(this.positions, Math.max(INITIAL_POSITIONS, (p + freq) * 2));
      grown += this.positions.byteLength - before;
    }
    const out = this.positions;
    for (let k = 0; k < freq; k++) out[p++] = positions[start + k]!;
    this.positionsLength = p;
    return grown;
  }

  /** Bytes held by the arrays (the write buffer's memory estimate). */
  bytes(): number {
    return this.ordinals.byteLength + this.freqs.byteLength + this.positions.byteLength;
  }
}

const EMPTY = new Uint32Array(0);

function grow32(a: Uint32Array, capacity: number): Uint32Array {
  const grown = new Uint32Array(capacity);
  grown.set(a);
  return grown;
}
