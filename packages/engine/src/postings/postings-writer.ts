/**
 * Encodes postings lists, one term after another, into two shared streams:
 *
 * postings stream, per term (at `postingsOffset`):
 *   [skip table, only when the term has more than one block:
 *      per block 16 bytes, little-endian u32s:
 *        lastOrdinal | maxFreq | block start (relative to postingsOffset) | positions start (relative to positionsOffset)]
 *   [blocks]
 *   full block (128 docs):  width byte, 128 × (ordinal delta − 1) bit-packed,
 *                           width byte, 128 × (freq − 1) bit-packed
 *   tail block (< 128 docs, the last block only): per doc
 *                           varint((delta − 1) × 2 + (freq === 1 ? 1 : 0)), then varint(freq − 2) when freq > 1
 * positions stream, per doc: `freq` varints, the first position absolute and
 *   the rest as deltas (positions ascend within a doc).
 *
 * Deltas are of segment ordinals (0-based rank of the docid in the segment):
 * they are smaller than docid deltas in segments of re-indexed documents, and
 * let scorers index norms, values and live bits by ordinal. The skip table
 * sits before the blocks so `advance()` can skip whole blocks reading 16 bytes
 * each, and carries each block's max frequency for block-max WAND.
 */
import assert from 'node:assert/strict';
import { bitWidth, packBlock } from './bitpack.js';
import { ByteSink } from './byte-sink.js';
import { BLOCK_SIZE } from './constants.js';

/** What a term's entry in the term dictionary records about its postings. */
export interface TermPostingsInfo {
  /** Documents containing the term. */
  df: number;
  /** Sum of the term's frequencies. */
  totalTermFreq: number;
  /** Largest frequency in one document (a score upper bound for MaxScore). */
  maxFreq: number;
  postingsOffset: number;
  positionsOffset: number;
  hasPositions: boolean;
}

export const SKIP_ENTRY_BYTES = 16;

export class PostingsWriter {
  private readonly ordinals = new Uint32Array(BLOCK_SIZE);
  private readonly freqs = new Uint32Array(BLOCK_SIZE);
  private readonly scratchValues = new Uint32Array(BLOCK_SIZE);
  /** Blocks of the current term, copied after its skip table by finishTerm(). */
  private readonly blocks = new ByteSink(4096);
  private skip = new Uint32Array(64);
  private blockCount = 0;
  private inBlock = 0;
  private lastOrdinal = -1;
  private blockMaxFreq = 0;
  private blockPositionsStart = 0;
  private hasPositions = false;
  private termPositionsStart = 0;
  private df = 0;
  private totalTermFreq = 0;
  private maxFreq = 0;

  constructor(readonly postings: ByteSink, readonly positions: ByteSink) {}

  startTerm(hasPositions: boolean): void {
    this.blocks.clear();
    this.blockCount = 0;
    this.inBlock = 0;
    this.lastOrdinal = -1;
    this.blockMaxFreq = 0;
    this.hasPositions = hasPositions;
    this.termPositionsStart = this.positions.length;
    this.blockPositionsStart = this.positions.length;
    this.df = 0;
    this.totalTermFreq = 0;
    this.maxFreq = 0;
  }

  /**
   * One document of the current term. `positions[positionsStart ..
   * positionsStart + freq)` are its ascending positions (ignored when the term
   * has none).
   */
  addDoc(ordinal: number, freq: number, positions: ArrayLike<number> | null, positionsStart: number): void {
    assert.ok(ordinal > this.lastOrdinal, 'postings ordinals must ascend');
    assert.ok(freq >= 1, 'a posting needs a frequency of at least 1');
    const i = this.inBlock;
    this.ordinals[i] = ordinal;
    this.freqs[i] = freq;
    this.lastOrdinal = ordinal;
    if (freq > this.blockMaxFreq) this.blockMaxFreq = freq;
    this.df++;
    this.totalTermFreq += freq;
    if (this.hasPositions) {
      assert.ok(positions !== null, 'a term with positions needs them for every document');
      const sink = this.positions;
      let previous = 0;
      for (let k = positionsStart, end = positionsStart + freq; k < end; k++) {
        const position = positions[k]!;
        assert.ok(position >= previous, 'positions must ascend within a document');
        sink.writeVarint(position - previous);
        previous = position;
      }
    }
    this.inBlock = i + 1;
    if (this.inBlock === BLOCK_SIZE) this.flushFullBlock();
  }

  private recordSkip(): void {
    const at = this.blockCount * 4;
    if (at + 4 > this.skip.length) {
      const grown = new Uint32Array(this.skip.length * 2);
      grown.set(this.skip);
      this.skip = grown;
    }
    this.skip[at] = this.lastOrdinal;
    this.skip[at + 1] = this.blockMaxFreq;
    this.skip[at + 2] = this.blocks.length;
    this.skip[at + 3] = this.blockPositionsStart - this.termPositionsStart;
    if (this.blockMaxFreq > this.maxFreq) this.maxFreq = this.blockMaxFreq;
    this.blockCount++;
  }

  private flushFullBlock(): void {
    this.recordSkip();
    const values = this.scratchValues;
    const ordinals = this.ordinals;
    // The previous block's last ordinal (or −1 for the first block) is the delta base.
    let previous = this.blockCount === 1 ? -1 : this.skip[(this.blockCount - 2) * 4]!;
    for (let i = 0; i < BLOCK_SIZE; i++) {
      values[i] = ordinals[i]! - previous - 1;
      previous = ordinals[i]!;
    }
    let width = bitWidth(values, BLOCK_SIZE);
    this.blocks.writeByte(width);
    packBlock(values, width, this.blocks);
    for (let i = 0; i < BLOCK_SIZE; i++) values[i] = this.freqs[i]! - 1;
    width = bitWidth(values, BLOCK_SIZE);
    this.blocks.writeByte(width);
    packBlock(values, width, this.blocks);
    this.inBlock = 0;
    this.blockMaxFreq = 0;
    this.blockPositionsStart = this.positions.length;
  }

  private flushTailBlock(): void {
    const n = this.inBlock;
    this.recordSkip();
    let previous = this.blockCount === 1 ? -1 : this.skip[(this.blockCount - 2) * 4]!;
    const sink = this.blocks;
    for (let i = 0; i < n; i++) {
      const ordinal = this.ordinals[i]!;
      const freq = this.freqs[i]!;
      sink.writeVarint((ordinal - previous - 1) * 2 + (freq === 1 ? 1 : 0));
      if (freq !== 1) sink.writeVarint(freq - 2);
      previous = ordinal;
    }
    this.inBlock = 0;
  }

  /**
   * Write the current term's skip table and blocks. Returns false (writing
   * nothing) when the term got no documents, e.g. all were deleted in a merge.
   */
  finishTerm(info: TermPostingsInfo): boolean {
    if (this.inBlock > 0) this.flushTailBlock();
    if (this.df === 0) return false;
    const out = this.postings;
    info.df = this.df;
    info.totalTermFreq = this.totalTermFreq;
    info.maxFreq = this.maxFreq;
    info.postingsOffset = out.length;
    info.positionsOffset = this.termPositionsStart;
    info.hasPositions = this.hasPositions;
    if (this.blockCount > 1) {
      const tableBytes = this.blockCount * SKIP_ENTRY_BYTES;
      for (let b = 0; b < this.blockCount; b++) {
        out.writeUint32(this.skip[b * 4]!);
        out.writeUint32(this.skip[b * 4 + 1]!);
        out.writeUint32(this.skip[b * 4 + 2]! + tableBytes);
        out.writeUint32(this.skip[b * 4 + 3]!);
      }
    }
    out.writeBytes(this.blocks.bytes, 0, this.blocks.length);
    return true;
  }
}

/** An empty info object to be filled by finishTerm(). */
export function emptyTermPostingsInfo(): TermPostingsInfo {
  return { df: 0, totalTermFreq: 0, maxFreq: 0, postingsOffset: 0, positionsOffset: 0, hasPositions: false };
}
