/**
 * Doc-at-a-time iterator over one encoded postings list (layout:
 * postings-writer.ts). Blocks are decoded into the iterator's own slot of
 * shared Uint32Arrays, reused for each block; `advance(target)` first skips whole blocks by reading their
 * last ordinal from the skip table, without decoding them. Nothing is
 * allocated per posting; reuse an iterator for many terms with `reset()`.
 *
 * States: before the first `next()`/`advance()` `docid` is −1; after the last
 * posting it is NO_MORE_DOCS.
 */
import assert from 'node:assert/strict';
import { unpackBlock } from './bitpack.js';
import { BLOCK_SIZE, NO_MORE_DOCS } from './constants.js';
import type { DecodedPostings } from './postings-cache.js';
import { SKIP_ENTRY_BYTES, type TermPostingsInfo } from './postings-writer.js';

/** The bytes a postings list lives in, and the ordinal → docid map of its segment. */
export interface PostingsSource {
  readonly postings: Uint8Array;
  readonly positions: Uint8Array;
  /** Segment ordinal → docid, ascending (docids are unique); null when the encoded ordinals are the docids. */
  readonly docidOf: Uint32Array | null;
}

/**
 * Placeholders until an iterator decodes its first block. A query makes an
 * iterator per term and segment and drops it, and each typed array of its
 * own is an off-heap allocation (~1–3 µs): the block arrays are a slot of
 * shared slabs (`claimBlock`), taken on the first decode, and the positions
 * buffer is made on the first positions() call.
 */
const NO_BYTES = new Uint8Array(0);
const NO_BLOCK = new Uint32Array(0);
const NO_POSITIONS = new Int32Array(0);
const POSITIONS_BUFFER_MIN = 64;

export class PostingsIterator {
  /** Current docid: −1 before the start, NO_MORE_DOCS at the end. */
  docid = -1;
  /** Segment ordinal of `docid` (index into norms, values, live bits). */
  ordinal = -1;
  /** Frequency of the term in the current document. */
  freq = 0;

  private postings: Uint8Array = NO_BYTES;
  private positionsBytes: Uint8Array = NO_BYTES;
  /** Ordinal → docid; null when a docid is its ordinal + `docidDelta` (a segment of consecutive docids: an add, not a lookup). */
  private docidOf: Uint32Array | null = null;
  private docidDelta = 0;
  private df = 0;
  private maxFreq = 0;
  private base = 0;
  private positionsBase = 0;
  private hasPositions = false;
  private blockCount = 0;
  /** Index of the decoded block (−1: none yet). */
  private block = -1;
  private blockLength = 0;
  private index = 0;
  /**
   * The current block's postings from `offset` on: the iterator's slot of the
   * slabs (offset: `ownOffset`) for a block unpacked from bytes, or a cached
   * decoded list's arrays (offset: the block's start), read in place without a copy.
   */
  private ordinals: Uint32Array = NO_BLOCK;
  private docids: Uint32Array = NO_BLOCK;
  private freqs: Uint32Array = NO_BLOCK;
  private offset = 0;
  /** The slabs holding the iterator's slot (from `ownOffset`), once a block was unpacked from bytes. */
  private own: DecodedPostings | null = null;
  private ownOffset = 0;
  /** Position-stream cursor: at the positions of doc `positionsDoc` of the decoded block. */
  private positionsPointer = 0;
  private positionsDoc = 0;
  private positionsBuffer = NO_POSITIONS;
  /** The whole list already decoded (postings cache): blocks are copied from it, not unpacked. */
  private decoded: DecodedPostings | null = null;

  /** The whole list decoded into fresh arrays (to cache it); the iterator is left exhausted. */
  decodeAll(): DecodedPostings {
    const n = this.df;
    const out = { ordinals: new Uint32Array(n), docids: new Uint32Array(n), freqs: new Uint32Array(n) };
    let i = 0;
    for (let d = this.next(); d !== NO_MORE_DOCS; d = this.next(), i++) {
      out.ordinals[i] = this.ordinal;
      out.docids[i] = d;
      out.freqs[i] = this.freq;
    }
    assert.equal(i, n, 'postings list shorter than its df');
    return out;
  }

  /** Point the iterator at another term's postings (`decoded`: the same list, already decoded). */
  reset(source: PostingsSource, info: TermPostingsInfo, decoded: DecodedPostings | null = null): this {
    this.decoded = decoded;
    this.postings = source.postings;
    this.positionsBytes = source.positions;
    const map = source.docidOf;
    if (map === null || map.length === 0 || map[map.length - 1]! - map[0]! !== map.length - 1) {
      this.docidOf = map;
      this.docidDelta = 0;
    } else {
      this.docidOf = null;
      this.docidDelta = map[0]!;
    }
    this.df = info.df;
    this.maxFreq = info.maxFreq;
    this.base = info.postingsOffset;
    this.positionsBase = info.positionsOffset;
    this.hasPositions = info.hasPositions;
    this.blockCount = Math.ceil(info.df / BLOCK_SIZE);
    this.block = -1;
    this.blockLength = 0;
    this.index = 0;
    this.docid = info.df === 0 ? NO_MORE_DOCS : -1;
    this.ordinal = -1;
    this.freq = 0;
    return this;
  }

  /** Whether positions() has data (terms indexed without positions only have frequencies). */
  get withPositions(): boolean {
    return this.hasPositions;
  }

  /** Documents in the list (an upper bound on what is left). */
  cost(): number {
    return this.df;
  }

  next(): number {
    const i = this.index + 1;
    if (i < this.blockLength) {
      this.index = i;
      const j = this.offset + i;
      this.ordinal = this.ordinals[j]!;
      this.freq = this.freqs[j]!;
      return (this.docid = this.docids[j]!);
    }
    if (this.docid === NO_MORE_DOCS) return NO_MORE_DOCS;
    if (this.block + 1 >= this.blockCount) return this.exhaust();
    this.decodeBlock(this.block + 1);
    return this.setIndex(0);
  }

  /** First docid ≥ target (the current one if it already is). */
  advance(target: number): number {
    if (this.docid >= target) return this.docid;
    let b = this.block;
    if (b < 0 || this.blockLength === 0 || this.docids[this.offset + this.blockLength - 1]! < target) {
      b++;
      if (b >= this.blockCount) return this.exhaust();
      // Skip whole blocks whose last docid is below target (the last block needs no check), galloping
      // over the skip table: the first block from b whose last docid reaches target.
      const last = this.blockCount - 1;
      let step = 1;
      while (b < last && this.skipLastDocid(b) < target) {
        const next = b + step;
        if (next >= last || this.skipLastDocid(next) >= target) {
          let hi = next >= last ? last : next;
          b++;
          while (b < hi) {
            const mid = (b + hi) >>> 1;
            if (this.skipLastDocid(mid) < target) b = mid + 1;
            else hi = mid;
          }
          break;
        }
        b = next;
        step *= 2;
      }
      this.decodeBlock(b);
      this.index = -1;
    }
    const docids = this.docids;
    const offset = this.offset;
    const n = this.blockLength;
    // Galloping: steps of 1, 2, 4… past postings below target, then a binary search in the last step
    // (a conjunction's targets often lie far into a long list's block).
    let lo = this.index + 1;
    let step = 1;
    while (lo < n && docids[offset + lo]! < target) {
      const next = lo + step;
      if (next >= n || docids[offset + next]! >= target) {
        let hi = next >= n ? n : next;
        // First index in (lo, hi] — or n — whose docid is ≥ target.
        lo++;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (docids[offset + mid]! < target) lo = mid + 1;
          else hi = mid;
        }
        break;
      }
      lo = next;
      step *= 2;
    }
    if (lo >= n) return this.exhaust();
    return this.setIndex(lo);
  }

  /**
   * Positions of the term in the current document, ascending, in
   * `[0, freq)` of the returned (reused) array. Meaningless for terms
   * without positions (check `withPositions`).
   */
  positions(): Int32Array {
    if (!this.hasPositions) return this.positionsBuffer;
    const b = this.positionsBytes;
    let p = this.positionsPointer;
    // Skip the positions of the block's documents passed over since the last call.
    for (let d = this.positionsDoc; d < this.index; d++) {
      for (let k = this.freqs[this.offset + d]!; k > 0; k--) while (b[p++]! >= 0x80);
    }
    // Stay at the current document's start, so a second call decodes the same positions.
    this.positionsPointer = p;
    this.positionsDoc = this.index;
    const n = this.freq;
    if (this.positionsBuffer.length < n) this.positionsBuffer = new Int32Array(Math.max(n, POSITIONS_BUFFER_MIN, this.positionsBuffer.length * 2));
    const out = this.positionsBuffer;
    let position = 0;
    for (let k = 0; k < n; k++) {
      let byte = b[p++]!;
      let delta = byte & 0x7f;
      let shift = 7;
      while (byte >= 0x80) {
        byte = b[p++]!;
        delta |= (byte & 0x7f) << shift;
        shift += 7;
      }
      position += delta;
      out[k] = position;
    }
    return out;
  }

  /** Blocks of this list (block-max collection walks them). */
  get blocks(): number {
    return this.blockCount;
  }

  /** Index of the block `next()` reads from next: the current one while documents are left in it. */
  get nextBlock(): number {
    return this.index + 1 < this.blockLength ? this.block : this.block + 1;
  }

  /** Whether the current block has documents left to read (block-max collection skips only whole unread blocks). */
  get inBlock(): boolean {
    return this.index + 1 < this.blockLength;
  }

  /** Postings in block `b`. */
  blockDocCount(b: number): number {
    return b === this.blockCount - 1 ? this.df - b * BLOCK_SIZE : BLOCK_SIZE;
  }

  /** Largest frequency in block `b`, from the skip table (no decoding). */
  maxFreqOfBlock(b: number): number {
    if (this.blockCount <= 1) return this.maxFreq;
    return readU32(this.postings, this.base + b * SKIP_ENTRY_BYTES + 4);
  }

  /**
   * Pass over block `b` (the next block, none of it read yet) without
   * decoding it; `next()` continues with block `b + 1`. Ordinals of the
   * skipped postings go to `ordinalsOut` only when given (decoded then).
   */
  skipBlock(b: number, ordinalsOut?: (ordinals: Uint32Array, count: number) => void): void {
    assert.ok(b === this.nextBlock && !this.inBlock, 'skipBlock: only the next, unread block');
    if (ordinalsOut !== undefined) {
      this.decodeBlock(b);
      const { ordinals, offset, blockLength } = this;
      ordinalsOut(offset === 0 ? ordinals : ordinals.subarray(offset, offset + blockLength), blockLength);
    }
    // Between blocks: nothing decoded is current; next()/advance() read block b + 1.
    this.block = b;
    this.blockLength = 0;
    this.index = -1;
    this.docid = -1;
    this.ordinal = -1;
    this.freq = 0;
    if (b + 1 >= this.blockCount) this.exhaust();
  }

  /** Largest frequency in the current block (block-max WAND). */
  blockMaxFreq(): number {
    if (this.blockCount <= 1) return this.maxFreq;
    return readU32(this.postings, this.base + this.block * SKIP_ENTRY_BYTES + 4);
  }

  /** Last docid of the current block: the block-max bound holds up to here. */
  blockLastDocid(): number {
    return this.block < 0 ? -1 : this.docids[this.offset + this.blockLength - 1]!;
  }

  private exhaust(): number {
    this.index = this.blockLength;
    this.ordinal = -1;
    this.freq = 0;
    return (this.docid = NO_MORE_DOCS);
  }

  private setIndex(i: number): number {
    this.index = i;
    const j = this.offset + i;
    this.ordinal = this.ordinals[j]!;
    this.freq = this.freqs[j]!;
    return (this.docid = this.docids[j]!);
  }

  private skipLastDocid(b: number): number {
    const ordinal = readU32(this.postings, this.base + b * SKIP_ENTRY_BYTES);
    return this.docidOf === null ? ordinal + this.docidDelta : this.docidOf[ordinal]!;
  }

  private decodeBlock(b: number): void {
    const bytes = this.postings;
    let p: number;
    let previous: number;
    if (this.blockCount === 1) {
      p = this.base;
      previous = -1;
      this.positionsPointer = this.positionsBase;
    } else {
      const entry = this.base + b * SKIP_ENTRY_BYTES;
      p = this.base + readU32(bytes, entry + 8);
      previous = b === 0 ? -1 : readU32(bytes, entry - SKIP_ENTRY_BYTES);
      this.positionsPointer = this.positionsBase + readU32(bytes, entry + 12);
    }
    this.positionsDoc = 0;
    const tail = b === this.blockCount - 1 ? this.df - b * BLOCK_SIZE : BLOCK_SIZE;
    const decoded = this.decoded;
    if (decoded !== null) {
      this.ordinals = decoded.ordinals;
      this.docids = decoded.docids;
      this.freqs = decoded.freqs;
      this.offset = b * BLOCK_SIZE;
      this.blockLength = tail;
      this.block = b;
      return;
    }
    if (this.own === null) {
      this.ownOffset = claimBlock();
      this.own = slabs;
    }
    const own = this.own;
    const ordinals = this.ordinals = own.ordinals;
    const freqs = this.freqs = own.freqs;
    const docids = this.docids = own.docids;
    const at = this.offset = this.ownOffset;
    // Ordinals are stored as deltas: the running sum gives each ordinal, mapped to its docid in the same pass.
    const map = this.docidOf;
    const delta = this.docidDelta;
    if (tail === BLOCK_SIZE) {
      p = unpackBlock(bytes, p + 1, bytes[p]!, ordinals, 1, at);
      unpackBlock(bytes, p + 1, bytes[p]!, freqs, 1, at);
      const end = at + BLOCK_SIZE;
      if (map === null) {
        for (let i = at; i < end; i++) {
          previous += ordinals[i]!;
          ordinals[i] = previous;
          docids[i] = previous + delta;
        }
      } else {
        for (let i = at; i < end; i++) {
          previous += ordinals[i]!;
          ordinals[i] = previous;
          docids[i] = map[previous]!;
        }
      }
    } else {
      const end = at + tail;
      for (let i = at; i < end; i++) {
        let byte = bytes[p++]!;
        let v = byte & 0x7f;
        let shift = 7;
        while (byte >= 0x80) {
          byte = bytes[p++]!;
          v += (byte & 0x7f) * 2 ** shift;
          shift += 7;
        }
        const odd = v & 1;
        previous += (v - odd) / 2 + 1;
        ordinals[i] = previous;
        docids[i] = map === null ? previous + delta : map[previous]!;
        if (odd === 1) {
          freqs[i] = 1;
        } else {
          byte = bytes[p++]!;
          let f = byte & 0x7f;
          shift = 7;
          while (byte >= 0x80) {
            byte = bytes[p++]!;
            f |= (byte & 0x7f) << shift;
            shift += 7;
          }
          freqs[i] = f + 2;
        }
      }
    }
    this.blockLength = tail;
    this.block = b;
    assert.ok(tail > 0 && docids[at + tail - 1]! < NO_MORE_DOCS, 'decoded postings block is empty or out of range');
  }
}

function readU32(b: Uint8Array, p: number): number {
  return (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
}

/**
 * Iterators unpack blocks into a slot of BLOCK_SIZE entries of shared slabs
 * (ordinals, docids, frequencies), a new set of slabs when one is used up: a
 * query makes an iterator per term and segment, and block arrays of its own
 * (an off-heap backing store, and typed array objects) cost more than
 * decoding a short list. Nothing is handed back: slabs are freed once no
 * iterator holds them, and an iterator lives for one query.
 */
const SLAB_SLOTS = 64;
let slabs: DecodedPostings = { ordinals: NO_BLOCK, docids: NO_BLOCK, freqs: NO_BLOCK };
let slabUsed = 0;

/** Offset of a free slot in `slabs` (which it may replace). */
function claimBlock(): number {
  if (slabUsed + BLOCK_SIZE > slabs.ordinals.length) {
    const n = SLAB_SLOTS * BLOCK_SIZE;
    slabs = { ordinals: new Uint32Array(n), docids: new Uint32Array(n), freqs: new Uint32Array(n) };
    slabUsed = 0;
  }
  const at = slabUsed;
  slabUsed += BLOCK_SIZE;
  return at;
}
