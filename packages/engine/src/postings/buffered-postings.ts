/**
 * The write buffer's postings, laid out as Lucene's indexing chain does:
 * each distinct term gets a dense id (one Map entry per term); per-term state
 * lives in parallel typed arrays indexed by id, grown by doubling as a whole;
 * postings are appended to two slice streams per term inside one shared
 * ByteSlicePool — never an array per term.
 *
 * Streams of a term (varints):
 * - docs: per posting `(ordinal − previous ordinal − 1) · 2 + (freq = 1)`,
 *   then `freq − 2` when freq ≠ 1 (the segment tail-block encoding);
 * - positions: per posting with positions, its `freq` ascending positions as
 *   deltas from the previous one (the first from 0). Opened at the term's
 *   first positional posting.
 *
 * Positions: the postings `[0, positionalDocs)` of a term carry them. A
 * posting without positions ends that for the term (the schema decides per
 * field, so a mix only follows a schema change, or a global term fed by a
 * field indexed without positions); the term is then read and flushed
 * without positions.
 *
 * - skips: before every SKIP_INTERVAL-th posting, the previous posting's
 *   ordinal and the docs and positions streams' write states (address, slice
 *   end, slice level), so `PostingsCursor.skipTo` can jump over postings
 *   without decoding them.
 *
 * Buffer ordinals are assigned in add order, so they ascend within a term.
 * A document's postings are all written inside `addDocument`, so a reader
 * (which captures a term's posting count at its reset) never sees half a
 * document.
 */
import assert from 'node:assert/strict';
import { ByteSlicePool, growInt32, SliceReader, SliceStreams, STREAM_FIELDS } from './byte-slice-pool.js';
import { TermHash } from './term-hash.js';
import { packStrings, type PackedStrings, unpackStrings } from '../values/packed-strings.js';

const INITIAL_TERMS = 1024;

/** A document's text tokens as ids of a named dictionary (the analysis thread's; `names` maps them to terms). */
export interface TextTokens {
  readonly dictionary: string;
  readonly names: readonly string[];
  readonly ids: Int32Array;
  readonly positions: Int32Array;
}
/** Postings between two skip entries. */
export const SKIP_INTERVAL = 32;
/**
 * Estimated V8 bytes per distinct term outside the typed arrays: the id →
 * term slot and the string's header (its characters are counted apart).
 */
const TERM_OVERHEAD_BYTES = 32;

/**
 * A term's record in `BufferedPostings.terms`: TERM_STRIDE int32s, one
 * 64-byte cache line, holding every field `addDocument` touches for it (as
 * parallel arrays these were a cache miss each per term per document: with
 * 166k terms each array is ~1 MiB).
 */
const TERM_STRIDE = 16;
/** Postings of the term (replaced and deleted documents included). */
const DOC_FREQ = 0;
/** Leading postings that carry positions; = DOC_FREQ while the term has positions. */
const POSITIONAL_DOCS = 1;
/** Ordinal of the term's last posting (the docs stream's delta base), −1 before the first. */
const LAST_ORDINAL = 2;
/** During `addDocument`: the term's frequency in the document (0 when it has not occurred yet). */
const DOC_TERM_FREQ = 3;
/**
 * During `addDocument`: the term's last position in the document, or −1
 * once an occurrence had none; while positions are written, the delta base.
 */
const DOC_TERM_POSITION = 4;
/** The docs and positions streams' write states (SliceStreams fields). */
const DOCS_STREAM = 5;
const POSITIONS_STREAM = DOCS_STREAM + STREAM_FIELDS;

/** BufferedPostings.snapshot: plain data and typed arrays (structured-clone safe). */
export interface PostingsSnapshot {
  readonly blocks: Uint8Array[];
  /** Term records (TERM_STRIDE int32s each). */
  readonly terms: Int32Array;
  /** The skips streams' states. */
  readonly skips: Int32Array;
  /** The terms by id. */
  readonly names: PackedStrings;
}

export class BufferedPostings {
  readonly pool = new ByteSlicePool();
  /** Term id → record of TERM_STRIDE int32s (the fields above). */
  private terms: Int32Array;
  readonly docs: SliceStreams;
  readonly positions: SliceStreams;
  readonly skips: SliceStreams;
  /** Term id → term. */
  readonly names: string[];
  private readonly ids = new TermHash();
  private capacity = INITIAL_TERMS;
  /** Term ids and positions of the current document's tokens, and its distinct terms. */
  private tokenIds: Int32Array = new Int32Array(256);
  private tokenPositions: Int32Array = new Int32Array(256);
  /** Dictionary id of the analysis thread → this buffer's term id + 1 (0: not met yet), for `localDictionary`. */
  private localIds: Int32Array = new Int32Array(0);
  private localDictionary = '';
  private touched: Int32Array = new Int32Array(256);
  private termBytes = 0;

  constructor() {
    this.names = this.ids.names;
    this.terms = new Int32Array(INITIAL_TERMS * TERM_STRIDE);
    this.docs = new SliceStreams(this.pool, INITIAL_TERMS, TERM_STRIDE, DOCS_STREAM, this.terms);
    this.positions = new SliceStreams(this.pool, INITIAL_TERMS, TERM_STRIDE, POSITIONS_STREAM, this.terms);
    this.skips = new SliceStreams(this.pool, INITIAL_TERMS);
  }

  get termCount(): number {
    return this.names.length;
  }

  /** Postings of term `id` (replaced and deleted documents included). */
  docFreq(id: number): number {
    return this.terms[id * TERM_STRIDE + DOC_FREQ]!;
  }

  /** Leading postings of term `id` that carry positions. */
  positionalDocs(id: number): number {
    return this.terms[id * TERM_STRIDE + POSITIONAL_DOCS]!;
  }

  /**
   * What a reader of the postings needs (PostingsCursor, DecodedTerm, flush),
   * as copies that can cross to another thread. Only for a buffer that no
   * longer takes documents (the copies would miss later ones).
   */
  snapshot(): PostingsSnapshot {
    const n = this.names.length;
    return {
      blocks: this.pool.blocks.map((b) => b.slice()),
      terms: this.terms.slice(0, n * TERM_STRIDE),
      skips: this.skips.state.slice(0, n * STREAM_FIELDS),
      names: packStrings(this.names),
    };
  }

  /** Postings to read, from a snapshot (they take no documents: the per-document state is not carried). */
  static fromSnapshot(s: PostingsSnapshot): BufferedPostings {
    const postings = new BufferedPostings();
    postings.pool.blocks.push(...s.blocks);
    for (const name of unpackStrings(s.names)) postings.ids.idOf(name);
    postings.setTerms(s.terms);
    postings.skips.state = s.skips;
    return postings;
  }

  /** The id of `term`, or −1. */
  termId(term: string): number {
    return this.ids.find(term);
  }

  hasPositions(id: number): boolean {
    const at = id * TERM_STRIDE;
    return this.terms[at + POSITIONAL_DOCS] === this.terms[at + DOC_FREQ];
  }

  /** Estimated bytes held: the pool, the per-term records, the term strings and their map entries. */
  bytes(): number {
    return this.pool.byteLength + this.terms.byteLength + this.skips.state.byteLength
      + 2 * this.tokenIds.byteLength + this.localIds.byteLength + this.touched.byteLength + this.ids.byteLength + this.termBytes;
  }

  /**
   * Append one document: token `i` is `terms[i]` at `positions[i]` (< 0: no
   * position), then the tokens of `text` (ids of its dictionary, from the
   * analysis thread). A term's frequency is its number of tokens. `ordinal`
   * must be above every ordinal added before.
   */
  addDocument(ordinal: number, terms: readonly string[], positions: ArrayLike<number>, text?: TextTokens): void {
    const named = terms.length;
    if (positions.length !== named) assert.fail('a document needs one position (or −1) per token');
    const n = named + (text === undefined ? 0 : text.ids.length);
    if (this.tokenIds.length < n) {
      const size = Math.max(n, this.tokenIds.length * 2);
      this.tokenIds = new Int32Array(size);
      this.tokenPositions = new Int32Array(size);
    }
    const tokenIds = this.tokenIds;
    const tokenPositions = this.tokenPositions;
    for (let i = 0; i < named; i++) {
      tokenIds[i] = this.idOf(terms[i]!);
      tokenPositions[i] = positions[i]!;
    }
    if (text !== undefined) this.textIds(text, named);
    // Read after the ids: adding a term may have grown the records.
    const records = this.terms;
    // Pass 1: frequencies, whether every occurrence has a position and they ascend.
    let touchedCount = 0;
    let unsorted = false;
    for (let i = 0; i < n; i++) {
      const at = tokenIds[i]! * TERM_STRIDE;
      const position = tokenPositions[i]!;
      const freq = records[at + DOC_TERM_FREQ]!;
      if (freq === 0) {
        if (touchedCount === this.touched.length) this.touched = growInt32(this.touched, touchedCount * 2);
        this.touched[touchedCount++] = tokenIds[i]!;
        records[at + DOC_TERM_POSITION] = position < 0 ? -1 : position;
      } else {
        const last = records[at + DOC_TERM_POSITION]!;
        if (last >= 0) {
          if (position < 0) records[at + DOC_TERM_POSITION] = -1;
          else {
            if (position < last) unsorted = true;
            records[at + DOC_TERM_POSITION] = position;
          }
        }
      }
      records[at + DOC_TERM_FREQ] = freq + 1;
    }
    // Pass 2: one docs-stream entry per distinct term; decide which terms write positions.
    const touched = this.touched;
    for (let k = 0; k < touchedCount; k++) {
      const id = touched[k]!;
      const at = id * TERM_STRIDE;
      const freq = records[at + DOC_TERM_FREQ]!;
      const delta = ordinal - records[at + LAST_ORDINAL]! - 1;
      if (delta < 0) assert.fail('buffer ordinals must ascend within a term');
      const df = records[at + DOC_FREQ]!;
      if (df % SKIP_INTERVAL === 0 && df > 0) this.writeSkip(id, df);
      this.docs.writeVarint(id, delta * 2 + (freq === 1 ? 1 : 0));
      if (freq !== 1) this.docs.writeVarint(id, freq - 2);
      records[at + LAST_ORDINAL] = ordinal;
      if (records[at + DOC_TERM_POSITION]! >= 0 && records[at + POSITIONAL_DOCS] === df) {
        if (df === 0) this.positions.open(id);
        records[at + POSITIONAL_DOCS] = df + 1;
        records[at + DOC_TERM_POSITION] = 0;
      } else {
        records[at + DOC_TERM_POSITION] = -1;
      }
      records[at + DOC_FREQ] = df + 1;
      records[at + DOC_TERM_FREQ] = 0;
    }
    // Pass 3: positions as deltas, in position order per term.
    if (unsorted) {
      this.writePositions(sortedByPosition(n, tokenPositions), tokenPositions);
      return;
    }
    for (let i = 0; i < n; i++) {
      const id = tokenIds[i]!;
      const at = id * TERM_STRIDE + DOC_TERM_POSITION;
      const previous = records[at]!;
      if (previous < 0) continue;
      const position = tokenPositions[i]!;
      this.positions.writeVarint(id, position - previous);
      records[at] = position;
    }
  }

  /** The skip entry before posting `df` of term `id` (all earlier postings are written, positions included). */
  private writeSkip(id: number, df: number): void {
    const skips = this.skips;
    if (df === SKIP_INTERVAL) skips.open(id);
    const docs = this.docs;
    const positions = this.positions;
    skips.writeVarint(id, this.terms[id * TERM_STRIDE + LAST_ORDINAL]!);
    skips.writeVarint(id, docs.upto(id));
    skips.writeVarint(id, docs.end(id) - docs.upto(id));
    skips.writeVarint(id, docs.level(id));
    skips.writeVarint(id, positions.upto(id));
    skips.writeVarint(id, positions.end(id) - positions.upto(id));
    skips.writeVarint(id, positions.level(id));
  }

  /** Pass 3 for a document whose positions did not ascend per term: tokens in `order`. */
  private writePositions(order: Int32Array, positions: ArrayLike<number>): void {
    const tokenIds = this.tokenIds;
    const records = this.terms;
    for (let k = 0; k < order.length; k++) {
      const i = order[k]!;
      const id = tokenIds[i]!;
      const at = id * TERM_STRIDE + DOC_TERM_POSITION;
      const previous = records[at]!;
      if (previous < 0) continue;
      const position = positions[i]!;
      this.positions.writeVarint(id, position - previous);
      records[at] = position;
    }
  }

  /**
   * The text tokens' ids in this buffer, from `at` in the token scratch: one
   * array access per token once the buffer has met the dictionary id (its
   * string is hashed here only the first time).
   */
  private textIds(text: TextTokens, at: number): void {
    if (text.dictionary !== this.localDictionary) {
      this.localDictionary = text.dictionary;
      this.localIds = new Int32Array(Math.max(1024, text.names.length));
    }
    const ids = text.ids;
    const textPositions = text.positions;
    const tokenIds = this.tokenIds;
    const tokenPositions = this.tokenPositions;
    let localIds = this.localIds;
    for (let j = 0; j < ids.length; j++) {
      const foreign = ids[j]!;
      if (foreign >= localIds.length) localIds = this.localIds = growInt32(localIds, Math.max(foreign + 1, localIds.length * 2));
      let id = localIds[foreign]! - 1;
      if (id < 0) {
        id = this.idOf(text.names[foreign]!);
        localIds[foreign] = id + 1;
      }
      tokenIds[at + j] = id;
      tokenPositions[at + j] = textPositions[j]!;
    }
  }

  private idOf(term: string): number {
    const id = this.ids.idOf(term);
    if (!this.ids.added) return id;
    if (id === this.capacity) this.grow(id * 2);
    this.docs.open(id);
    this.terms[id * TERM_STRIDE + LAST_ORDINAL] = -1;
    this.termBytes += TERM_OVERHEAD_BYTES + 2 * term.length;
    return id;
  }

  private grow(capacity: number): void {
    this.capacity = capacity;
    this.setTerms(growInt32(this.terms, capacity * TERM_STRIDE));
    this.skips.grow(capacity);
  }

  /** The term records, shared with the docs and positions streams. */
  private setTerms(terms: Int32Array): void {
    this.terms = terms;
    this.docs.state = terms;
    this.positions.state = terms;
  }
}

/** Token indices ordered by position (stable; rare path, allocates). */
function sortedByPosition(n: number, positions: ArrayLike<number>): Int32Array {
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  return order.sort((a, b) => positions[a]! - positions[b]! || a - b);
}

/**
 * Sequential reader of one term's postings, oldest first: `next()` decodes
 * the next posting into `ordinal` and `freq`; `readPositions` gives the
 * current posting's positions (skipping those of postings passed over);
 * `skipTo` jumps over postings by the skip entries. Reads the postings
 * present at `reset` only.
 */
export class PostingsCursor {
  ordinal = -1;
  freq = 0;
  /** Index of the current posting in the term (−1 before the first). */
  index = -1;
  /** Postings to read (the term's count at reset). */
  count = 0;
  /** The term had positions for every posting at reset. */
  withPositions = false;
  private positional = 0;
  private postings: BufferedPostings | null = null;
  private readonly docs = new SliceReader();
  private readonly positions = new SliceReader();
  private readonly skips = new SliceReader();
  /** Skip entries of the postings present at reset, and those read. */
  private skipCount = 0;
  private skipsRead = 0;
  /** The skip entry read but not applied yet (its ordinal; −1: none). */
  private skipOrdinal = -1;
  private readonly skipState = new Int32Array(6);
  /** Positions stored before the current posting's that the positions reader has not passed yet. */
  private positionsToSkip = 0;
  /** The current posting's positions have been read. */
  private positionsRead = false;

  /** Read term `id`'s first `count` postings (default: all it has now). */
  reset(postings: BufferedPostings, id: number, count = postings.docFreq(id)): this {
    this.postings = postings;
    this.count = count;
    this.positional = Math.min(postings.positionalDocs(id), count);
    this.withPositions = this.positional === this.count;
    this.docs.reset(postings.pool, postings.docs.start(id));
    if (this.positional > 0) this.positions.reset(postings.pool, postings.positions.start(id));
    // Entries precede postings SKIP_INTERVAL, 2·SKIP_INTERVAL, … below count.
    this.skipCount = count > 0 ? Math.floor((count - 1) / SKIP_INTERVAL) : 0;
    if (this.skipCount > 0) this.skips.reset(postings.pool, postings.skips.start(id));
    this.skipsRead = 0;
    this.skipOrdinal = -1;
    this.ordinal = -1;
    this.freq = 0;
    this.index = -1;
    this.positionsToSkip = 0;
    this.positionsRead = true;
    return this;
  }

  next(): boolean {
    const index = this.index;
    if (index + 1 >= this.count) {
      this.index = this.count;
      return false;
    }
    if (!this.positionsRead && index >= 0 && index < this.positional) this.positionsToSkip += this.freq;
    const code = this.docs.readVarint();
    this.ordinal += (code >>> 1) + 1;
    this.freq = (code & 1) === 1 ? 1 : this.docs.readVarint() + 2;
    this.index = index + 1;
    this.positionsRead = false;
    return true;
  }

  /**
   * Jump over postings whose docid is below `target`, as far as the skip
   * entries allow (then `next()` goes on from there). Only when ordinal order
   * is docid order (`docidOf` ascending).
   */
  skipTo(docidOf: Uint32Array, target: number): void {
    const state = this.skipState;
    while (this.skipsRead < this.skipCount) {
      if (this.skipOrdinal < 0) {
        const skips = this.skips;
        this.skipOrdinal = skips.readVarint();
        for (let k = 0; k < 6; k++) state[k] = skips.readVarint();
      }
      // The entry precedes posting `first`; posting first − 1 has skipOrdinal.
      const first = (this.skipsRead + 1) * SKIP_INTERVAL;
      if (first > this.index + 1) {
        if (docidOf[this.skipOrdinal]! >= target) return;
        const pool = this.postings!.pool;
        this.docs.seek(pool, state[0]!, state[0]! + state[1]!, state[2]!);
        if (first < this.positional) this.positions.seek(pool, state[3]!, state[3]! + state[4]!, state[5]!);
        this.index = first - 1;
        this.ordinal = this.skipOrdinal;
        this.positionsToSkip = 0;
        this.positionsRead = true;
      }
      this.skipsRead++;
      this.skipOrdinal = -1;
    }
  }

  /** The current posting's positions into `out[start, start + freq)`; once per posting, only when it has them. */
  readPositions(out: Int32Array, start = 0): void {
    if (this.positionsRead || this.index >= this.positional) assert.fail('positions read twice or absent');
    if (this.positionsToSkip > 0) {
      this.positions.skipVarints(this.positionsToSkip);
      this.positionsToSkip = 0;
    }
    let position = 0;
    for (let k = 0; k < this.freq; k++) {
      position += this.positions.readVarint();
      out[start + k] = position;
    }
    this.positionsRead = true;
  }
}

/**
 * A whole term decoded into flat arrays (flush and search when buffer
 * ordinals are not in docid order, where postings must be reordered).
 * Arrays are reused across calls and valid up to `count`.
 */
export class DecodedTerm {
  count = 0;
  withPositions = false;
  ordinals = new Int32Array(64);
  freqs = new Int32Array(64);
  /** Start of each posting's positions in `positions` (when decoded with them). */
  positionsStart = new Int32Array(64);
  positions: Int32Array = new Int32Array(256);
  private readonly cursor = new PostingsCursor();

  /** Decode term `id` (its first `count` postings); positions too when `withPositions` and the term has them. */
  decode(postings: BufferedPostings, id: number, withPositions: boolean, count = postings.docFreq(id)): this {
    const cursor = this.cursor.reset(postings, id, count);
    const n = cursor.count;
    if (this.ordinals.length < n) {
      const capacity = Math.max(n, this.ordinals.length * 2);
      this.ordinals = new Int32Array(capacity);
      this.freqs = new Int32Array(capacity);
      this.positionsStart = new Int32Array(capacity);
    }
    this.count = n;
    this.withPositions = cursor.withPositions;
    const decodePositions = withPositions && cursor.withPositions;
    let p = 0;
    for (let i = 0; cursor.next(); i++) {
      this.ordinals[i] = cursor.ordinal;
      this.freqs[i] = cursor.freq;
      if (!decodePositions) continue;
      this.positionsStart[i] = p;
      if (p + cursor.freq > this.positions.length) this.positions = growInt32(this.positions, Math.max(p + cursor.freq, this.positions.length * 2));
      cursor.readPositions(this.positions, p);
      p += cursor.freq;
    }
    return this;
  }
}
