/**
 * Shared byte storage for the write buffer's postings (Lucene's ByteBlockPool
 * with slices): fixed 64 KiB blocks, and per stream a chain of slices that
 * grow 16 → 32 → … → 1024 bytes. The last 4 bytes of every slice are kept for
 * the address of the next one, written when the stream outgrows the slice.
 * A stream never moves once written, so readers can walk it while writers
 * keep appending (the write buffer stays searchable during adds), and the
 * pool's size is its block count: no per-term arrays to allocate or sum.
 *
 * Addresses are absolute: `block index << BLOCK_SHIFT | offset`. A slice
 * never crosses a block, so a reader keeps one block in hand per slice.
 */
import assert from 'node:assert/strict';

export const BLOCK_SHIFT = 16;
export const BLOCK_BYTES = 1 << BLOCK_SHIFT;
export const BLOCK_MASK = BLOCK_BYTES - 1;
/** Bytes of the slices of a stream, by level; the last level repeats. Each includes the 4-byte forward address. */
export const SLICE_SIZES: readonly number[] = [16, 32, 64, 128, 256, 512, 1024];
export const SLICE_LEVEL_MAX = SLICE_SIZES.length - 1;
/** Bytes kept at the end of each slice for the next slice's address. */
export const FORWARD_BYTES = 4;
/** Addresses are int32 (stored in Int32Arrays). */
const ADDRESS_LIMIT = 2 ** 31;

export class ByteSlicePool {
  readonly blocks: Uint8Array[] = [];
  /** Next free address. */
  private next = 0;

  /** Bytes held (the blocks, allocated whole). */
  get byteLength(): number {
    return this.blocks.length * BLOCK_BYTES;
  }

  /** A new slice of `SLICE_SIZES[level]` bytes; returns its address. */
  allocSlice(level: number): number {
    const size = SLICE_SIZES[level]!;
    if (this.next + size > this.blocks.length * BLOCK_BYTES) {
      assert.ok((this.blocks.length + 1) * BLOCK_BYTES <= ADDRESS_LIMIT, 'write buffer postings pool is full');
      this.next = this.blocks.length * BLOCK_BYTES;
      this.blocks.push(new Uint8Array(BLOCK_BYTES));
    }
    const address = this.next;
    this.next += size;
    return address;
  }

  /** Link the slice whose forward address is at `at` to the slice at `target`. */
  writeForward(at: number, target: number): void {
    const block = this.blocks[at >>> BLOCK_SHIFT]!;
    const o = at & BLOCK_MASK;
    block[o] = target;
    block[o + 1] = target >>> 8;
    block[o + 2] = target >>> 16;
    block[o + 3] = target >>> 24;
  }
}

/** Int32s of one stream's write state: first slice's address, write address, end of the current slice's payload, level. */
export const STREAM_FIELDS = 4;
const START = 0;
const UPTO = 1;
const END = 2;
const LEVEL = 3;

/**
 * Write state of many slice streams (one per term id): for stream `id`, the
 * STREAM_FIELDS int32s at `id · stride + offset` of `state` — the first
 * slice's address, the write address, the end of the current slice's
 * payload (where its forward address goes) and its level. With a stride
 * above STREAM_FIELDS the state shares its records with the owner's other
 * per-term fields (BufferedPostings), so one cache line holds all of a
 * term's write state.
 */
export class SliceStreams {
  /** Replaced (grown) by the owner of a shared record array, which then sets it here. */
  state: Int32Array;

  constructor(readonly pool: ByteSlicePool, capacity: number, readonly stride = STREAM_FIELDS, readonly offset = 0, state?: Int32Array) {
    assert.ok(offset + STREAM_FIELDS <= stride, 'a stream state must fit its record');
    this.state = state ?? new Int32Array(capacity * stride);
  }

  /** Streams the state has room for. */
  get capacity(): number {
    return Math.floor(this.state.length / this.stride);
  }

  start(id: number): number {
    return this.state[id * this.stride + this.offset + START]!;
  }

  upto(id: number): number {
    return this.state[id * this.stride + this.offset + UPTO]!;
  }

  end(id: number): number {
    return this.state[id * this.stride + this.offset + END]!;
  }

  level(id: number): number {
    return this.state[id * this.stride + this.offset + LEVEL]!;
  }

  /** Make room for ids below `capacity`, existing streams kept (for a state of its own). */
  grow(capacity: number): void {
    this.state = growInt32(this.state, capacity * this.stride);
  }

  /** Give stream `id` its first slice. */
  open(id: number): void {
    const address = this.pool.allocSlice(0);
    const at = id * this.stride + this.offset;
    const state = this.state;
    state[at + START] = address;
    state[at + UPTO] = address;
    state[at + END] = address + SLICE_SIZES[0]! - FORWARD_BYTES;
    state[at + LEVEL] = 0;
  }

  /** Append `value` (unsigned, < 2^32) as a varint to stream `id`. */
  writeVarint(id: number, value: number): void {
    const blocks = this.pool.blocks;
    const state = this.state;
    const at = id * this.stride + this.offset;
    let upto = state[at + UPTO]!;
    let end = state[at + END]!;
    let block = blocks[upto >>> BLOCK_SHIFT]!;
    while (value >= 0x80) {
      if (upto === end) {
        upto = this.nextSlice(at, end);
        end = state[at + END]!;
        block = blocks[upto >>> BLOCK_SHIFT]!;
      }
      block[upto & BLOCK_MASK] = value | 0x80;
      upto++;
      value >>>= 7;
    }
    if (upto === end) {
      upto = this.nextSlice(at, end);
      block = blocks[upto >>> BLOCK_SHIFT]!;
    }
    block[upto & BLOCK_MASK] = value;
    state[at + UPTO] = upto + 1;
  }

  /** Chain a new slice after the full one ending at `end` (the stream's state at `at`); returns its address. */
  private nextSlice(at: number, end: number): number {
    const state = this.state;
    const level = Math.min(state[at + LEVEL]! + 1, SLICE_LEVEL_MAX);
    const address = this.pool.allocSlice(level);
    this.pool.writeForward(end, address);
    state[at + LEVEL] = level;
    state[at + END] = address + SLICE_SIZES[level]! - FORWARD_BYTES;
    return address;
  }
}

/**
 * Reads one slice stream from its first slice. It must not read past what
 * was written: the caller knows how many values the stream holds.
 */
export class SliceReader {
  private blocks: readonly Uint8Array[] = [];
  private block: Uint8Array = new Uint8Array(0);
  private address = 0;
  private end = 0;
  private level = 0;

  reset(pool: ByteSlicePool, start: number): this {
    this.blocks = pool.blocks;
    this.block = pool.blocks[start >>> BLOCK_SHIFT]!;
    this.address = start;
    this.end = start + SLICE_SIZES[0]! - FORWARD_BYTES;
    this.level = 0;
    return this;
  }

  /** Continue a stream from a write state recorded earlier (`SliceStreams` upto, end, level). */
  seek(pool: ByteSlicePool, address: number, end: number, level: number): this {
    this.blocks = pool.blocks;
    this.block = pool.blocks[address >>> BLOCK_SHIFT]!;
    this.address = address;
    this.end = end;
    this.level = level;
    return this;
  }

  readVarint(): number {
    if (this.address === this.end) this.jump();
    let b = this.block[this.address++ & BLOCK_MASK]!;
    if (b < 0x80) return b;
    let value = b & 0x7f;
    let shift = 7;
    do {
      if (this.address === this.end) this.jump();
      b = this.block[this.address++ & BLOCK_MASK]!;
      value |= (b & 0x7f) << shift;
      shift += 7;
    } while (b >= 0x80);
    return value >>> 0;
  }

  /** Skip `n` varints. */
  skipVarints(n: number): void {
    while (n > 0) {
      if (this.address === this.end) this.jump();
      if (this.block[this.address++ & BLOCK_MASK]! < 0x80) n--;
    }
  }

  private jump(): void {
    const block = this.block;
    const o = this.end & BLOCK_MASK;
    const next = block[o]! | (block[o + 1]! << 8) | (block[o + 2]! << 16) | (block[o + 3]! << 24);
    this.level = Math.min(this.level + 1, SLICE_LEVEL_MAX);
    this.block = this.blocks[next >>> BLOCK_SHIFT]!;
    this.address = next;
    this.end = next + SLICE_SIZES[this.level]! - FORWARD_BYTES;
  }
}

export function growInt32(a: Int32Array, capacity: number): Int32Array {
  const grown = new Int32Array(capacity);
  grown.set(a);
  return grown;
}
