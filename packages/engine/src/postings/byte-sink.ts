/**
 * A growable byte writer: the output of every encoder (postings, positions,
 * term dictionary, segments). It doubles its Uint8Array when full, so writing
 * n bytes costs O(n) amortised and no object per value.
 */
import assert from 'node:assert/strict';

export class ByteSink {
  bytes: Uint8Array;
  length = 0;

  constructor(initialBytes = 1024) {
    this.bytes = new Uint8Array(Math.max(16, initialBytes));
  }

  /** Make room for `extra` more bytes. */
  ensure(extra: number): void {
    const need = this.length + extra;
    if (need <= this.bytes.length) return;
    let capacity = this.bytes.length * 2;
    while (capacity < need) capacity *= 2;
    const grown = new Uint8Array(capacity);
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }

  clear(): void {
    this.length = 0;
  }

  writeByte(value: number): void {
    this.ensure(1);
    this.bytes[this.length++] = value;
  }

  /** Unsigned LEB128 of a non-negative safe integer below 2^35 (5 bytes at most). */
  writeVarint(value: number): void {
    assert.ok(value >= 0 && value < 34359738368, 'varint out of range');
    this.ensure(5);
    const b = this.bytes;
    let p = this.length;
    if (value < 0x80000000) {
      let v = value;
      while (v >= 0x80) {
        b[p++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      b[p++] = v;
    } else {
      let v = value;
      while (v >= 0x80) {
        b[p++] = (v % 128) | 0x80;
        v = Math.floor(v / 128);
      }
      b[p++] = v;
    }
    this.length = p;
  }

  writeUint32(value: number): void {
    this.ensure(4);
    const b = this.bytes;
    const p = this.length;
    b[p] = value & 0xff;
    b[p + 1] = (value >>> 8) & 0xff;
    b[p + 2] = (value >>> 16) & 0xff;
    b[p + 3] = (value >>> 24) & 0xff;
    this.length = p + 4;
  }

  writeBytes(src: Uint8Array, start = 0, end = src.length): void {
    const n = end - start;
    this.ensure(n);
    this.bytes.set(src.subarray(start, end), this.length);
    this.length += n;
  }

  /** Pad with zero bytes up to a multiple of `alignment` (typed-array views need aligned offsets). */
  align(alignment: number): void {
    const pad = (alignment - (this.length % alignment)) % alignment;
    this.ensure(pad);
    this.bytes.fill(0, this.length, this.length + pad);
    this.length += pad;
  }

  /** The written bytes (a view; copy it if the sink is reused). */
  view(): Uint8Array {
    return this.bytes.subarray(0, this.length);
  }
}
