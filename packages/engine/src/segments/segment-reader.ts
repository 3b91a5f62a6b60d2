/**
 * An open immutable segment: typed-array views over its bytes (no copy), the
 * term dictionary, and the segment's deletions (owned in memory here,
 * persisted in the manifest: segment-store.ts).
 */
import assert from 'node:assert/strict';
import { decode } from '@msgpack/msgpack';
import { POSTINGS_CACHE_DF_MIN, postingsCache } from '../postings/postings-cache.js';
import { PostingsIterator, type PostingsSource } from '../postings/postings-iterator.js';
import type { TermPostingsInfo } from '../postings/postings-writer.js';
import { Bitset } from '../values/bitset.js';
import { NumericColumn } from '../values/numeric-column.js';
import { indexOfSorted } from '../values/sorted-search.js';
import { StringColumn } from '../values/string-column.js';
import { StringDictionary } from '../values/string-dictionary.js';
import {
  SEGMENT_FORMAT, SEGMENT_MAGIC, SEGMENT_TAIL_PAD_BYTES, type FieldHeader, type FieldStats, type NumericHeader, type Section, type SegmentHeader,
  type StringHeader,
} from './segment-format.js';
import { align8 } from './segment-writer.js';
import { TermDictionary, TermsIterator } from './term-dictionary.js';

/** Term lookups a segment remembers (a few hundred KiB at most). */
const TERM_INFO_CACHE_MAX = 2048;

/** Distinguishes readers in the process-wide postings cache. */
let nextReaderKey = 0;

export class SegmentReader implements PostingsSource {
  readonly header: SegmentHeader;
  readonly docCount: number;
  /** Ordinal → docid, ascending. */
  readonly docids: Uint32Array;
  readonly docidOf: Uint32Array;
  readonly postings: Uint8Array;
  readonly positions: Uint8Array;
  readonly dictionary: TermDictionary;
  /** Deleted ordinals (set by deletes and updates of the segment's docs). */
  readonly deleted: Bitset;
  private deletedCount = 0;
  private readonly lookupCursor: TermsIterator;
  /** This reader's prefix in the process-wide postings cache (segment ids repeat across shards). */
  private readonly cacheKey = `${nextReaderKey++}\u0000`;
  /** Recent lookups (null: absent), copies of the cursor's scratch info; cleared when full. */
  private readonly termInfos = new Map<string, TermPostingsInfo | null>();
  /**
   * The header's entries by slot and by field; the columns and field lengths over the bytes are made on first use
   * and kept (`numbers`, `strings`, `norms`). A segment holds the fields of every document in it, thousands when documents
   * bring their own: made eagerly they cost about a dozen objects per field and segment, most never sorted,
   * aggregated or scored on.
   */
  private readonly numberHeaders = new Map<number, NumericHeader>();
  private readonly stringHeaders = new Map<number, StringHeader>();
  private readonly fieldHeaders = new Map<string, FieldHeader>();
  private readonly numbers = new Map<number, NumericColumn>();
  private readonly strings = new Map<number, StringColumn>();
  private readonly norms = new Map<string, Uint16Array>();
  /** Where the sections start in `bytes`: after the magic, the header's length and the header, 8-byte aligned. */
  private readonly base: number;

  /**
   * Open a segment over `bytes` (kept, not copied). `bytes.byteOffset` must be
   * a multiple of 8 for the typed views; `deleted`, when given, is the
   * manifest's deletion bitset.
   */
  constructor(readonly id: number, readonly bytes: Uint8Array, deleted?: Bitset) {
    assert.equal(bytes.byteOffset % 8, 0, 'segment bytes must be 8-byte aligned');
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    assert.equal(view.getUint32(0, true), SEGMENT_MAGIC, 'not a segment (bad magic)');
    const headerLength = view.getUint32(4, true);
    const header = decode(bytes.subarray(8, 8 + headerLength)) as SegmentHeader;
    assert.equal(header.format, SEGMENT_FORMAT, 'unsupported segment format');
    this.header = header;
    const base = align8(8 + headerLength);
    this.base = base;
    this.docCount = header.docCount;
    this.docids = this.u32(header.docids);
    this.docidOf = this.docids;
    assert.equal(this.docids.length, this.docCount, 'segment docids section has the wrong size');
    // The padding after postings/positions is part of the view (unpackBlock over-reads).
    this.postings = bytes.subarray(base + header.postings[0], base + header.postings[0] + header.postings[1] + SEGMENT_TAIL_PAD_BYTES);
    this.positions = this.u8(header.positions);
    this.dictionary = new TermDictionary(this.u8(header.dictionary), this.u32(header.dictionaryBlocks), header.termCount);
    this.lookupCursor = new TermsIterator(this.dictionary);
    for (const f of header.fields) this.fieldHeaders.set(f.field, f);
    for (const h of header.numbers) this.numberHeaders.set(h.slot, h);
    for (const h of header.strings) this.stringHeaders.set(h.slot, h);
    this.deleted = deleted ?? new Bitset(this.docCount);
    assert.equal(this.deleted.size, this.docCount, 'deletion bitset size differs from the segment');
    this.deletedCount = this.deleted.count();
  }

  get liveCount(): number {
    return this.docCount - this.deletedCount;
  }

  get deletedDocs(): number {
    return this.deletedCount;
  }

  get byteLength(): number {
    return this.bytes.byteLength;
  }

  /** The term's dictionary entry (a shared object: copy what you keep), or null. */
  termInfo(term: string): TermPostingsInfo | null {
    // A query looks each term up twice per segment (statistics, then postings), and
    // queries repeat terms: remember recent answers (the segment never changes).
    const cached = this.termInfos.get(term);
    if (cached !== undefined) return cached;
    const found = this.dictionary.lookup(term, this.lookupCursor);
    const info = found === null ? null : { ...found };
    if (this.termInfos.size >= TERM_INFO_CACHE_MAX) this.termInfos.clear();
    this.termInfos.set(term, info);
    return info;
  }

  /** An iterator over the term's postings (reusing `reuse` when given), or null when absent. */
  postingsIterator(term: string, reuse?: PostingsIterator): PostingsIterator | null {
    const info = this.termInfo(term);
    if (info === null) return null;
    const iterator = reuse ?? new PostingsIterator();
    if (info.df < POSTINGS_CACHE_DF_MIN || postingsCache.budget === 0) return iterator.reset(this, info);
    const key = this.cacheKey + term;
    let decoded = postingsCache.get(key);
    if (decoded === undefined) {
      decoded = iterator.reset(this, info).decodeAll();
      postingsCache.put(key, decoded);
    }
    return iterator.reset(this, info, decoded);
  }

  /** Terms starting with `prefix`, in byte order. */
  terms(prefix = ''): TermsIterator {
    return this.dictionary.terms(prefix);
  }

  numericColumn(slot: number): NumericColumn | null {
    const made = this.numbers.get(slot);
    if (made !== undefined) return made;
    const h = this.numberHeaders.get(slot);
    if (h === undefined) return null;
    const min = this.f64(h.min);
    const column = h.offsets === undefined
      ? new NumericColumn(this.docCount, min, min, null, min, true)
      : new NumericColumn(this.docCount, min, this.f64(h.max!), this.u32(h.offsets), this.f64(h.values!), true);
    this.numbers.set(slot, column);
    return column;
  }

  stringColumn(slot: number): StringColumn | null {
    const made = this.strings.get(slot);
    if (made !== undefined) return made;
    const h = this.stringHeaders.get(slot);
    if (h === undefined) return null;
    const dictionary = new StringDictionary(this.u8(h.dictionaryBytes), this.u32(h.dictionaryOffsets));
    const min = this.i32(h.min);
    const column = h.offsets === undefined
      ? new StringColumn(this.docCount, dictionary, min, min, null, min)
      : new StringColumn(this.docCount, dictionary, min, this.i32(h.max!), this.u32(h.offsets), this.i32(h.ords!));
    this.strings.set(slot, column);
    return column;
  }

  numericSlots(): number[] {
    return [...this.numberHeaders.keys()];
  }

  stringSlots(): number[] {
    return [...this.stringHeaders.keys()];
  }

  fieldNames(): string[] {
    return [...this.fieldHeaders.keys()];
  }

  /** Field lengths by ordinal (saturated at NORM_MAX), or null when no doc has the field. */
  fieldNorms(field: string): Uint16Array | null {
    const made = this.norms.get(field);
    if (made !== undefined) return made;
    const f = this.fieldHeaders.get(field);
    if (f === undefined) return null;
    const norms = new Uint16Array(this.bytes.buffer, this.bytes.byteOffset + this.base + f.norms[0], f.norms[1] / 2);
    this.norms.set(field, norms);
    return norms;
  }

  /** The field's doc count and length sum over all docs of the segment (deleted ones included, as in Lucene). */
  fieldStats(field: string): FieldStats | null {
    return this.fieldHeaders.get(field) ?? null;
  }

  private u8(s: Section): Uint8Array {
    return this.bytes.subarray(this.base + s[0], this.base + s[0] + s[1]);
  }

  private u32(s: Section): Uint32Array {
    return new Uint32Array(this.bytes.buffer, this.bytes.byteOffset + this.base + s[0], s[1] / 4);
  }

  private i32(s: Section): Int32Array {
    return new Int32Array(this.bytes.buffer, this.bytes.byteOffset + this.base + s[0], s[1] / 4);
  }

  private f64(s: Section): Float64Array {
    return new Float64Array(this.bytes.buffer, this.bytes.byteOffset + this.base + s[0], s[1] / 8);
  }

  /** The ordinal of `docid`, or −1 (binary search). */
  ordinalOf(docid: number): number {
    return indexOfSorted(this.docids, docid, 0, this.docids.length - 1);
  }

  isLive(docid: number): boolean {
    const ordinal = this.ordinalOf(docid);
    return ordinal >= 0 && !this.deleted.has(ordinal);
  }

  isLiveOrdinal(ordinal: number): boolean {
    return !this.deleted.has(ordinal);
  }

  /** Mark `docid` deleted; false when the segment lacks it or it already was. */
  delete(docid: number): boolean {
    const ordinal = this.ordinalOf(docid);
    if (ordinal < 0 || this.deleted.has(ordinal)) return false;
    this.deleted.add(ordinal);
    this.deletedCount++;
    return true;
  }
}
