/**
 * The sorted term dictionary of a segment, block-prefix-compressed.
 *
 * Terms are in UTF-8 byte order, in blocks of DICTIONARY_BLOCK_TERMS. Each
 * block starts with a full term (shared prefix 0), so a lookup binary-searches
 * the blocks' first terms through `blockOffsets` and then scans one block.
 * Entry: varint shared-prefix length, varint suffix length, suffix bytes,
 * varint df, varint (totalTermFreq − df), varint (maxFreq − 1),
 * varint postingsOffset, varint (positionsOffset × 2 + hasPositions).
 */
import assert from 'node:assert/strict';
import { ByteSink } from '../postings/byte-sink.js';
import type { TermPostingsInfo } from '../postings/postings-writer.js';
import { compareBytes } from '../values/string-dictionary.js';

/** Terms per block: 32 keeps a block scan short (≤ 31 entries) and the block index at 1/8 byte per term. */
export const DICTIONARY_BLOCK_TERMS = 32;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class TermDictionaryWriter {
  readonly sink = new ByteSink(64 * 1024);
  private blockOffsets = new Uint32Array(1024);
  private previous = new Uint8Array(256);
  private previousLength = 0;
  termCount = 0;

  /** Append a term (bytes strictly greater than the previous term's). */
  add(term: Uint8Array, termLength: number, info: TermPostingsInfo): void {
    const sink = this.sink;
    let shared = 0;
    if (this.termCount % DICTIONARY_BLOCK_TERMS === 0) {
      const block = this.termCount / DICTIONARY_BLOCK_TERMS;
      if (block === this.blockOffsets.length) {
        const grown = new Uint32Array(block * 2);
        grown.set(this.blockOffsets);
        this.blockOffsets = grown;
      }
      this.blockOffsets[block] = sink.length;
    } else {
      const n = Math.min(termLength, this.previousLength);
      while (shared < n && term[shared] === this.previous[shared]) shared++;
    }
    assert.ok(this.termCount === 0 || compareBytes(term, 0, termLength, this.previous, this.previousLength) > 0, 'terms must be added in ascending byte order');
    sink.writeVarint(shared);
    sink.writeVarint(termLength - shared);
    sink.writeBytes(term, shared, termLength);
    sink.writeVarint(info.df);
    sink.writeVarint(info.totalTermFreq - info.df);
    sink.writeVarint(info.maxFreq - 1);
    sink.writeVarint(info.postingsOffset);
    sink.writeVarint(info.positionsOffset * 2 + (info.hasPositions ? 1 : 0));
    if (this.previous.length < termLength) this.previous = new Uint8Array(termLength * 2);
    this.previous.set(term.subarray(0, termLength));
    this.previousLength = termLength;
    this.termCount++;
  }

  blocks(): Uint32Array {
    return this.blockOffsets.subarray(0, Math.ceil(this.termCount / DICTIONARY_BLOCK_TERMS));
  }
}

/** Reads entries of one dictionary; used by lookups and by TermsIterator. */
export class TermDictionary {
  constructor(readonly bytes: Uint8Array, readonly blockOffsets: Uint32Array, readonly termCount: number) {}

  /** Index of the block to scan for `key`: the last block whose first term is ≤ key (0 if none). */
  blockFor(key: Uint8Array, keyLength: number): number {
    const bytes = this.bytes;
    let lo = 0;
    let hi = this.blockOffsets.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      // A block's first entry: varint 0 (shared), varint length, bytes.
      let p = this.blockOffsets[mid]! + 1;
      let length = 0;
      let shift = 0;
      let byte: number;
      do {
        byte = bytes[p++]!;
        length |= (byte & 0x7f) << shift;
        shift += 7;
      } while (byte >= 0x80);
      if (compareBytes(bytes, p, p + length, key, keyLength) <= 0) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** A cursor over all terms from `prefix` on (see TermsIterator). */
  terms(prefix = ''): TermsIterator {
    return new TermsIterator(this).seek(prefix);
  }

  /** The info of `term`, or null when the segment lacks it. `scratch` is filled and returned. */
  lookup(term: string, cursor: TermsIterator): TermPostingsInfo | null {
    if (this.termCount === 0) return null;
    const keyLength = cursor.setKey(term);
    const key = cursor.key;
    cursor.startBlock(this.blockFor(key, keyLength));
    while (cursor.step()) {
      const c = compareBytes(cursor.termBytes, 0, cursor.termLength, key, keyLength);
      if (c === 0) return cursor.info;
      if (c > 0) return null;
    }
    return null;
  }
}

/**
 * Walks a dictionary in term order, from a prefix: `next()` → false past the
 * last term with the prefix. The current term is `termBytes[0, termLength)`
 * (a reused buffer) and `info`; `term()` decodes it to a string.
 */
export class TermsIterator {
  termBytes = new Uint8Array(256);
  termLength = 0;
  readonly info: TermPostingsInfo = { df: 0, totalTermFreq: 0, maxFreq: 0, postingsOffset: 0, positionsOffset: 0, hasPositions: false };
  key = new Uint8Array(256);
  private keyLength = 0;
  private prefixLength = 0;
  private pointer = 0;
  /** Index of the next entry to read. */
  private ordinal = 0;
  /** The entry at `pointer` was already read by seek() and is current. */
  private pending = false;

  constructor(private readonly dictionary: TermDictionary) {}

  /** UTF-8 encode `term` into `key`; returns its byte length. */
  setKey(term: string): number {
    if (this.key.length < term.length * 3) this.key = new Uint8Array(term.length * 3);
    this.keyLength = encoder.encodeInto(term, this.key).written;
    return this.keyLength;
  }

  /** Position before the first term ≥ prefix; next() then yields the terms starting with it. */
  seek(prefix: string): this {
    this.prefixLength = this.setKey(prefix);
    this.pending = false;
    if (this.dictionary.termCount === 0) {
      this.ordinal = 0;
      return this;
    }
    this.startBlock(this.dictionary.blockFor(this.key, this.prefixLength));
    while (this.step()) {
      if (compareBytes(this.termBytes, 0, this.termLength, this.key, this.prefixLength) >= 0) {
        this.pending = true;
        break;
      }
    }
    return this;
  }

  next(): boolean {
    if (this.pending) this.pending = false;
    else if (!this.step()) return false;
    // Past the prefix range?
    if (this.termLength < this.prefixLength) return this.stop();
    const key = this.key;
    const term = this.termBytes;
    for (let i = 0; i < this.prefixLength; i++) if (term[i] !== key[i]) return this.stop();
    return true;
  }

  term(): string {
    return decoder.decode(this.termBytes.subarray(0, this.termLength));
  }

  /** Jump to the start of block `b` (next step() reads its first term). */
  startBlock(b: number): void {
    this.ordinal = b * DICTIONARY_BLOCK_TERMS;
    this.pointer = this.dictionary.blockOffsets[b]!;
  }

  /** Read the entry at the pointer into termBytes/info; false at the end. */
  step(): boolean {
    if (this.ordinal >= this.dictionary.termCount) return false;
    const b = this.dictionary.bytes;
    let p = this.pointer;
    const shared = readVarint(b, p);
    p = varintEnd;
    const suffix = readVarint(b, p);
    p = varintEnd;
    const length = shared + suffix;
    if (this.termBytes.length < length) {
      const grown = new Uint8Array(length * 2);
      grown.set(this.termBytes.subarray(0, shared));
      this.termBytes = grown;
    }
    // A byte loop, not set(subarray()): suffixes are short and a view per entry is garbage.
    const termBytes = this.termBytes;
    for (let i = 0; i < suffix; i++) termBytes[shared + i] = b[p + i]!;
    p += suffix;
    this.termLength = length;
    const info = this.info;
    info.df = readVarint(b, p);
    info.totalTermFreq = readVarint(b, varintEnd) + info.df;
    info.maxFreq = readVarint(b, varintEnd) + 1;
    info.postingsOffset = readVarint(b, varintEnd);
    const positions = readVarint(b, varintEnd);
    info.hasPositions = positions % 2 === 1;
    info.positionsOffset = (positions - (positions % 2)) / 2;
    this.pointer = varintEnd;
    this.ordinal++;
    return true;
  }

  private stop(): boolean {
    this.ordinal = this.dictionary.termCount;
    this.pending = false;
    return false;
  }
}

/** End position of the last readVarint (module-level to avoid returning pairs). */
let varintEnd = 0;

function readVarint(b: Uint8Array, p: number): number {
  let byte = b[p++]!;
  let value = byte & 0x7f;
  let scale = 128;
  while (byte >= 0x80) {
    byte = b[p++]!;
    value += (byte & 0x7f) * scale;
    scale *= 128;
  }
  varintEnd = p;
  return value;
}
