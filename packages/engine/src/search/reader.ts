/**
 * What search needs from one searchable part of a shard: an immutable
 * SegmentReader or the live WriteBuffer (both satisfy this structurally).
 * A snapshot's readers cover disjoint live docids: a docid live in a newer
 * reader is deleted in the older ones, so per-reader results simply add up.
 *
 * The two differ only in how they enumerate their term dictionary
 * (a byte-ordered cursor vs. a sorted array) and in how they report a term's
 * document frequency; `termDocFreq` and `visitTerms` hide that.
 */
import type { FieldStats } from '../segments/segment-format.js';
import type { TermDictionary } from '../segments/term-dictionary.js';
import type { NumericColumn } from '../values/numeric-column.js';
import type { StringColumn } from '../values/string-column.js';

/** A term's postings: both PostingsIterator and MemoryPostingsIterator. `docid` −1 before the start. */
export interface SearchPostings {
  readonly docid: number;
  /** Reader ordinal of `docid` (index into norms, values, live bits). */
  readonly ordinal: number;
  readonly freq: number;
  readonly withPositions: boolean;
  next(): number;
  advance(target: number): number;
  /** Positions of the current document in `[0, freq)` of a reused array. */
  positions(): Int32Array;
  cost(): number;
}

interface SearchReaderBase {
  /** Ordinals assigned (deleted ones included). */
  readonly docCount: number;
  readonly liveCount: number;
  /** Ordinal → docid. */
  readonly docidOf: Uint32Array;
  isLiveOrdinal(ordinal: number): boolean;
  /** Ordinal of `docid`'s live copy (or of a deleted one: check isLiveOrdinal), −1 when absent. */
  ordinalOf(docid: number): number;
  postingsIterator(term: string): SearchPostings | null;
  fieldNorms(field: string): Uint16Array | null;
  fieldStats(field: string): FieldStats | null;
  numericColumn(slot: number): NumericColumn | null;
  stringColumn(slot: number): StringColumn | null;
}

/** A cursor over a byte-ordered term dictionary from a prefix (segments/term-dictionary.ts TermsIterator). */
export interface TermsCursor {
  readonly info: { readonly df: number };
  next(): boolean;
  term(): string;
}

/** An immutable segment: ordinals are in docid order. */
export interface SegmentSearchReader extends SearchReaderBase {
  termInfo(term: string): { readonly df: number } | null;
  terms(prefix?: string): TermsCursor;
  /** The byte-ordered dictionary itself, for walks that seek (fuzzy.ts). */
  readonly dictionary: TermDictionary;
}

/** The write buffer: ordinals in add order (`inDocidOrder` says whether that is docid order). */
export interface BufferSearchReader extends SearchReaderBase {
  readonly inDocidOrder: boolean;
  docFreq(term: string): number;
  termsWithPrefix(prefix: string): string[];
  /** Terms by id in the order first added, and their document frequencies (walks that need no order: fuzzy.ts). */
  readonly postings: { readonly names: readonly string[]; docFreq(id: number): number };
}

export type SearchReader = SegmentSearchReader | BufferSearchReader;

function isBuffer(reader: SearchReader): reader is BufferSearchReader {
  return 'termsWithPrefix' in reader;
}

/** Whether the reader's ordinal order is docid order (segments always; the buffer when docids came ascending). */
export function ordinalsInDocidOrder(reader: SearchReader): boolean {
  return isBuffer(reader) ? reader.inDocidOrder : true;
}

/** Documents containing `term` in this reader (deleted ones included, as BM25 statistics are in Lucene). */
export function termDocFreq(reader: SearchReader, term: string): number {
  return isBuffer(reader) ? reader.docFreq(term) : reader.termInfo(term)?.df ?? 0;
}

/**
 * Call `visit(term, df)` for each term of the reader starting with `prefix`,
 * in code point order; stops early when `visit` returns false.
 */
export function visitTerms(reader: SearchReader, prefix: string, visit: (term: string, df: number) => boolean): void {
  if (isBuffer(reader)) {
    for (const term of reader.termsWithPrefix(prefix)) if (!visit(term, reader.docFreq(term))) return;
    return;
  }
  const cursor = reader.terms(prefix);
  while (cursor.next()) if (!visit(cursor.term(), cursor.info.df)) return;
}
