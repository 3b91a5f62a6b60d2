/**
 * Bit-packing of 128-value blocks: every value of a block takes `width` bits,
 * little-endian bit order, so a block is exactly 16 × width bytes. Full
 * postings blocks use it for docid deltas and frequencies: decoding is a fixed
 * loop with no branch per value (see segments.bench.ts for the rate).
 */
import assert from 'node:assert/strict';
import type { ByteSink } from './byte-sink.js';
import { BLOCK_SIZE } from './constants.js';

/** Bits needed for the largest of `values[0..count)` (0 when all are 0). */
export function bitWidth(values: Uint32Array, count: number): number {
  let or = 0;
  for (let i = 0; i < count; i++) or |= values[i]!;
  return or === 0 ? 0 : 32 - Math.clz32(or);
}

/** Append BLOCK_SIZE values of `width` bits (values must fit). */
export function packBlock(values: Uint32Array, width: number, sink: ByteSink): void {
  assert.ok(width >= 0 && width <= 32, 'bit width out of range');
  const bytes = width * (BLOCK_SIZE / 8);
  sink.ensure(bytes);
  const out = sink.bytes;
  const base = sink.length;
  out.fill(0, base, base + bytes);
  if (width > 0) {
    let bit = 0;
    for (let i = 0; i < BLOCK_SIZE; i++) {
      let v = values[i]!;
      let remaining = width;
      let p = base + (bit >>> 3);
      let shift = bit & 7;
      while (remaining > 0) {
        out[p] = out[p]! | ((v << shift) & 0xff);
        const written = 8 - shift;
        v = written >= 32 ? 0 : v >>> written;
        remaining -= written;
        shift = 0;
        p++;
      }
      bit += width;
    }
  }
  sink.length = base + bytes;
}

/**
 * Decode BLOCK_SIZE values of `width` bits from `bytes` at `offset` into
 * `out` from index `at`, adding `add` to each (1 turns stored `delta - 1` back into a delta).
 * Returns the offset after the block. Reads up to 4 bytes past the block's
 * last value byte: encoders pad the end of their stream (SEGMENT_TAIL_PAD_BYTES).
 */
export function unpackBlock(bytes: Uint8Array, offset: number, width: number, out: Uint32Array, add: number, at = 0): number {
  if (width === 0) {
    out.fill(add, at, at + BLOCK_SIZE);
    return offset;
  }
  const mask = width === 32 ? 0xffffffff : (1 << width) - 1;
  let bit = 0;
  for (let i = 0; i < BLOCK_SIZE; i++) {
    const p = offset + (bit >>> 3);
    const shift = bit & 7;
    let v = (bytes[p]! | (bytes[p + 1]! << 8) | (bytes[p + 2]! << 16) | (bytes[p + 3]! << 24)) >>> shift;
    if (shift + width > 32) v |= bytes[p + 4]! << (32 - shift);
    out[at + i] = ((v & mask) >>> 0) + add;
    bit += width;
  }
  return offset + width * (BLOCK_SIZE / 8);
}
