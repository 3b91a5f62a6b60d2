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
  SEGMENT_FORMAT, SEGMENT_FORMAT_SPARSE, SEGMENT_MAGIC, SEGMENT_TAIL_PAD_BYTES, type FieldStats, type Section, type SegmentHeader,
} from './segment-format.js';
import { align8 } from './segment-writer.js';
import { TermDictionary, TermsIterator } from './term-dictionary.js';

/** Term lookups a segment remembers (a few hundred KiB at most). */
const TERM_INFO_CACHE_MAX = 2048;

/** Distinguishes readers in the process-wide postings cache. */
let nextReaderKey = 0;

/** The header's whole-segment part: its per-field and per-slot entries are kept flattened (see SegmentReader). */
export type SegmentSections = Omit<SegmentHeader, 'fields' | 'numbers' | 'strings'>;

/** Sections of one string slot's entry, in this order: max, offsets and ords only for multi-valued slots, ordinals for sparse ones. */
const STRING_SECTIONS = ['dictionaryBytes', 'dictionaryOffsets', 'min', 'max', 'offsets', 'ords', 'ordinals'] as const;
/** Sections of one numeric slot's entry, in this order: max, offsets and values only for multi-valued slots, ordinals for sparse ones. */
const NUMERIC_SECTIONS = ['min', 'max', 'offsets', 'values', 'ordinals'] as const;
/** Per field: its doc count and its length sum. */
const FIELD_STATS = 2;
/** Sections of one field's entry, in this order: ordinals for sparse norms only. */
const FIELD_SECTIONS = ['norms', 'ordinals'] as const;
/** A section an entry lacks, in the flattened sections. */
const ABSENT = 0xffffffff;
/** Field lengths, and columns, a segment keeps made (views, or arrays spread from sparse ones); past it the memory starts again. */
const MADE_KEPT_MAX = 256;

export class SegmentReader implements PostingsSource {
  readonly header: SegmentSections;
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
   * The header's entries by field and by slot, flattened into arrays (header order) with a sorted permutation to find
   * one by binary search. A segment holds the fields of every document in it, thousands when documents bring their
   * own: kept as the decoded objects (an object, a section array per section, a Map entry) they cost about 450 B per
   * field and segment, flattened about 60 (docs/reliability.md, R8). The columns and field lengths over the bytes are
   * made on first use and kept (`numbers`, `strings`, `norms`): most fields are never sorted, aggregated or scored on.
   */
  private readonly fieldNamesInOrder: readonly string[];
  private readonly fieldsSorted: Uint32Array;
  /** FIELD_STATS per field. */
  private readonly fieldStatsValues: Float64Array;
  /** Two per section of FIELD_SECTIONS (offset, length; ABSENT when absent). */
  private readonly fieldSections: Uint32Array;
  private readonly numberSlotsInOrder: Float64Array;
  private readonly numberSlotsSorted: Uint32Array;
  /** Two per section of NUMERIC_SECTIONS (offset, length; ABSENT when absent). */
  private readonly numberSections: Uint32Array;
  private readonly stringSlotsInOrder: Float64Array;
  private readonly stringSlotsSorted: Uint32Array;
  /** Two per section of STRING_SECTIONS (offset, length; ABSENT when absent). */
  private readonly stringSections: Uint32Array;
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
    const { fields, numbers, strings, ...header } = decode(bytes.subarray(8, 8 + headerLength)) as SegmentHeader;
    assert.ok(header.format === SEGMENT_FORMAT || header.format === SEGMENT_FORMAT_SPARSE, 'unsupported segment format');
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
    this.fieldNamesInOrder = fields.map((f) => f.field);
    this.fieldsSorted = sortedOrder(this.fieldNamesInOrder);
    this.fieldStatsValues = new Float64Array(fields.length * FIELD_STATS);
    fields.forEach((f, i) => this.fieldStatsValues.set([f.docCount, f.sumLength], i * FIELD_STATS));
    this.fieldSections = flattenSections(fields, FIELD_SECTIONS);
    this.numberSlotsInOrder = Float64Array.from(numbers, (h) => h.slot);
    this.numberSlotsSorted = sortedOrder(this.numberSlotsInOrder);
    this.numberSections = flattenSections(numbers, NUMERIC_SECTIONS);
    this.stringSlotsInOrder = Float64Array.from(strings, (h) => h.slot);
    this.stringSlotsSorted = sortedOrder(this.stringSlotsInOrder);
    this.stringSections = flattenSections(strings, STRING_SECTIONS);
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
    const i = findSorted(this.numberSlotsInOrder, this.numberSlotsSorted, slot);
    if (i < 0) return null;
    const at = i * NUMERIC_SECTIONS.length * 2;
    const section = (k: number): Section => sectionAt(this.numberSections, at + k * 2);
    const ordinals = section(4);
    const min = ordinals[1] !== ABSENT ? spread(this.u32(ordinals), this.f64(section(0)), new Float64Array(this.docCount).fill(NaN)) : this.f64(section(0));
    const column = this.numberSections[at + 2 * 2 + 1] === ABSENT
      ? new NumericColumn(this.docCount, min, min, null, min, true)
      : new NumericColumn(this.docCount, min, this.f64(section(1)), this.u32(section(2)), this.f64(section(3)), true);
    if (this.numbers.size >= MADE_KEPT_MAX) this.numbers.clear();
    this.numbers.set(slot, column);
    return column;
  }

  stringColumn(slot: number): StringColumn | null {
    const made = this.strings.get(slot);
    if (made !== undefined) return made;
    const i = findSorted(this.stringSlotsInOrder, this.stringSlotsSorted, slot);
    if (i < 0) return null;
    const at = i * STRING_SECTIONS.length * 2;
    const section = (k: number): Section => sectionAt(this.stringSections, at + k * 2);
    const dictionary = new StringDictionary(this.u8(section(0)), this.u32(section(1)));
    const ordinals = section(6);
    const min = ordinals[1] !== ABSENT ? spread(this.u32(ordinals), this.i32(section(2)), new Int32Array(this.docCount).fill(-1)) : this.i32(section(2));
    const column = this.stringSections[at + 4 * 2 + 1] === ABSENT
      ? new StringColumn(this.docCount, dictionary, min, min, null, min)
      : new StringColumn(this.docCount, dictionary, min, this.i32(section(3)), this.u32(section(4)), this.i32(section(5)));
    if (this.strings.size >= MADE_KEPT_MAX) this.strings.clear();
    this.strings.set(slot, column);
    return column;
  }

  numericSlots(): number[] {
    return [...this.numberSlotsInOrder];
  }

  stringSlots(): number[] {
    return [...this.stringSlotsInOrder];
  }

  fieldNames(): string[] {
    return [...this.fieldNamesInOrder];
  }

  /**
   * Field lengths by ordinal (saturated at NORM_MAX), or null when no doc has the field. Sparse norms are spread into
   * an array by ordinal; what was made is kept for the next call, a bounded number of fields (a merge or INFO reads
   * every field once, a search the few it scores).
   */
  fieldNorms(field: string): Uint16Array | null {
    const made = this.norms.get(field);
    if (made !== undefined) return made;
    const i = findSorted(this.fieldNamesInOrder, this.fieldsSorted, field);
    if (i < 0) return null;
    const at = i * FIELD_SECTIONS.length * 2;
    const lengths = this.u16(sectionAt(this.fieldSections, at));
    const ordinals = sectionAt(this.fieldSections, at + 2);
    const norms = ordinals[1] !== ABSENT ? spread(this.u32(ordinals), lengths, new Uint16Array(this.docCount)) : lengths;
    if (this.norms.size >= MADE_KEPT_MAX) this.norms.clear();
    this.norms.set(field, norms);
    return norms;
  }

  /** The field's doc count and length sum over all docs of the segment (deleted ones included, as in Lucene). */
  fieldStats(field: string): FieldStats | null {
    const i = findSorted(this.fieldNamesInOrder, this.fieldsSorted, field);
    if (i < 0) return null;
    return { docCount: this.fieldStatsValues[i * FIELD_STATS]!, sumLength: this.fieldStatsValues[i * FIELD_STATS + 1]! };
  }

  private u8(s: Section): Uint8Array {
    return this.bytes.subarray(this.base + s[0], this.base + s[0] + s[1]);
  }

  private u16(s: Section): Uint16Array {
    return new Uint16Array(this.bytes.buffer, this.bytes.byteOffset + this.base + s[0], s[1] / 2);
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

/** Indices of `keys` in ascending key order (`<`: code unit order for strings, as the writer sorts field names). */
function sortedOrder<K extends string | number>(keys: ArrayLike<K>): Uint32Array {
  const order = new Uint32Array(keys.length);
  let sorted = true;
  for (let i = 0; i < keys.length; i++) {
    order[i] = i;
    if (i > 0 && !(keys[i - 1]! < keys[i]!)) sorted = false;
  }
  return sorted ? order : order.sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : 0));
}

/** The index in `keys` of `key` (found through `order`, see sortedOrder), or −1. */
function findSorted<K extends string | number>(keys: ArrayLike<K>, order: Uint32Array, key: K): number {
  let low = 0;
  let high = order.length - 1;
  while (low <= high) {
    const mid = (low + high) >>> 1;
    const at = keys[order[mid]!]!;
    if (at === key) return order[mid]!;
    if (at < key) low = mid + 1;
    else high = mid - 1;
  }
  return -1;
}

/** The entries' sections named `names`, two numbers each (offset, length; ABSENT for one an entry lacks). */
function flattenSections<E>(entries: readonly E[], names: readonly (keyof E)[]): Uint32Array {
  const out = new Uint32Array(entries.length * names.length * 2).fill(ABSENT);
  entries.forEach((entry, i) => names.forEach((name, k) => {
    const s = entry[name] as Section | undefined;
    if (s !== undefined) out.set(s, (i * names.length + k) * 2);
  }));
  return out;
}

/** `into` with the sparse `values` of `ordinals` set at those ordinals. */
function spread<T extends Uint16Array | Int32Array | Float64Array>(ordinals: Uint32Array, values: T, into: T): T {
  for (let k = 0; k < ordinals.length; k++) into[ordinals[k]!] = values[k]!;
  return into;
}

function sectionAt(values: Uint32Array, at: number): Section {
  return [values[at]!, values[at + 1]!];
}
