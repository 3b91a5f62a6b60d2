/**
 * A sorted dictionary of unique strings: UTF-8 bytes back to back and a
 * Uint32Array of start offsets (count + 1). Order is UTF-8 byte order, which
 * is Unicode code point order (JavaScript's `<` compares UTF-16 code units and
 * differs for astral characters). A string's index in it is its ordinal.
 */
import assert from 'node:assert/strict';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class StringDictionary {
  /** Reused scratch for encoding lookups. */
  private scratch = new Uint8Array(256);

  constructor(readonly bytes: Uint8Array, readonly offsets: Uint32Array) {
    assert.ok(offsets.length >= 1, 'dictionary offsets need count + 1 entries');
  }

  /** Build from unique strings in any order; `sorted[i]` is the i-th string. */
  static build(strings: readonly string[]): StringDictionary {
    const encoded = strings.map((s) => Buffer.from(s, 'utf8'));
    encoded.sort(Buffer.compare);
    const offsets = new Uint32Array(encoded.length + 1);
    let total = 0;
    for (let i = 0; i < encoded.length; i++) {
      if (i > 0) assert.ok(Buffer.compare(encoded[i - 1]!, encoded[i]!) < 0, 'dictionary strings must be unique');
      offsets[i] = total;
      total += encoded[i]!.length;
    }
    offsets[encoded.length] = total;
    const bytes = new Uint8Array(total);
    for (let i = 0; i < encoded.length; i++) bytes.set(encoded[i]!, offsets[i]!);
    return new StringDictionary(bytes, offsets);
  }

  get count(): number {
    return this.offsets.length - 1;
  }

  term(ordinal: number): string {
    return decoder.decode(this.bytes.subarray(this.offsets[ordinal]!, this.offsets[ordinal + 1]!));
  }

  /**
   * Binary search: the ordinal of `value` when present, else −(insertion point) − 1.
   */
  lookup(value: string): number {
    const need = value.length * 3;
    if (this.scratch.length < need) this.scratch = new Uint8Array(need);
    const keyLength = encoder.encodeInto(value, this.scratch).written;
    const key = this.scratch;
    let lo = 0;
    let hi = this.count - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareBytes(this.bytes, this.offsets[mid]!, this.offsets[mid + 1]!, key, keyLength);
      if (c < 0) lo = mid + 1;
      else if (c > 0) hi = mid - 1;
      else return mid;
    }
    return -lo - 1;
  }
}

/** Compare bytes[start, end) with key[0, keyLength): negative, 0 or positive. */
export function compareBytes(bytes: Uint8Array, start: number, end: number, key: Uint8Array, keyLength: number): number {
  const n = Math.min(end - start, keyLength);
  for (let i = 0; i < n; i++) {
    const d = bytes[start + i]! - key[i]!;
    if (d !== 0) return d;
  }
  return end - start - keyLength;
}
