/**
 * One searchable part of a shard's index (an immutable segment or a write
 * buffer) behind one interface, so the query path walks both the same way.
 * WriteBuffer and SegmentReader share most method names already; they differ
 * in document frequency (`docFreq` vs `termInfo().df`), prefix listing
 * (array vs TermsIterator) and postings iterator class, which the two small
 * adapters here paper over.
 *
 * Deleted documents: a segment's postings still list them (its deletions are
 * a bitset beside the immutable bytes); a buffer's iterator skips them. So a
 * caller checks `isLiveOrdinal(cursor.ordinal)` on every hit, which is always
 * true for a buffer.
 */
import type { DocIterator } from '../scorers/doc-iterator.js';
import { MemoryPostingsIterator } from '../postings/memory-postings-iterator.js';
import { PostingsIterator } from '../postings/postings-iterator.js';
import type { FieldStats } from '../segments/segment-format.js';
import type { SegmentReader } from '../segments/segment-reader.js';
import type { WriteBuffer } from '../segments/write-buffer.js';
import type { NumericColumn } from '../values/numeric-column.js';
import type { StringColumn } from '../values/string-column.js';

/** A term's postings in one view: a DocIterator with the ordinal, frequency and positions of the current doc. */
export interface TermCursor extends DocIterator {
  /** View ordinal of `docid` (index into norms, columns, live bits). */
  readonly ordinal: number;
  readonly freq: number;
  /** Positions of the current doc in `[0, freq)` of a reused array (empty for terms without positions). */
  positions(): Int32Array;
}

export interface IndexView {
  readonly kind: 'segment' | 'buffer';
  /** Ordinals in use (deleted included): the length of norms and columns. */
  readonly docCount: number;
  readonly liveCount: number;
  /** Ordinal → docid. */
  readonly docidOf: Uint32Array;
  /** The term's postings, or null when the view lacks the term. Check `isLiveOrdinal` on each hit. */
  postings(term: string): TermCursor | null;
  /** Documents listing the term (deleted ones included), or 0. */
  docFreq(term: string): number;
  /** Terms starting with `prefix`, in code-point order. */
  termsWithPrefix(prefix: string): string[];
  isLiveOrdinal(ordinal: number): boolean;
  isLive(docid: number): boolean;
  /** Ordinal of `docid`'s copy in this view, or −1. */
  ordinalOf(docid: number): number;
  fieldNames(): string[];
  fieldNorms(field: string): Uint16Array | null;
  /** Statistics of the field (segments: over all docs, deleted included, as Lucene; buffers: live docs). */
  fieldStats(field: string): FieldStats | null;
  numericColumn(slot: number): NumericColumn | null;
  stringColumn(slot: number): StringColumn | null;
}

export class SegmentView implements IndexView {
  readonly kind = 'segment' as const;

  constructor(readonly reader: SegmentReader) {}

  get docCount(): number {
    return this.reader.docCount;
  }

  get liveCount(): number {
    return this.reader.liveCount;
  }

  get docidOf(): Uint32Array {
    return this.reader.docids;
  }

  postings(term: string): TermCursor | null {
    const info = this.reader.termInfo(term);
    return info === null ? null : new PostingsIterator().reset(this.reader, info);
  }

  docFreq(term: string): number {
    return this.reader.termInfo(term)?.df ?? 0;
  }

  termsWithPrefix(prefix: string): string[] {
    const out: string[] = [];
    const it = this.reader.terms(prefix);
    while (it.next()) out.push(it.term());
    return out;
  }

  isLiveOrdinal(ordinal: number): boolean {
    return this.reader.isLiveOrdinal(ordinal);
  }

  isLive(docid: number): boolean {
    return this.reader.isLive(docid);
  }

  ordinalOf(docid: number): number {
    return this.reader.ordinalOf(docid);
  }

  fieldNames(): string[] {
    return this.reader.fieldNames();
  }

  fieldNorms(field: string): Uint16Array | null {
    return this.reader.fieldNorms(field);
  }

  fieldStats(field: string): FieldStats | null {
    return this.reader.fieldStats(field);
  }

  numericColumn(slot: number): NumericColumn | null {
    return this.reader.numericColumn(slot);
  }

  stringColumn(slot: number): StringColumn | null {
    return this.reader.stringColumn(slot);
  }
}

/**
 * A write buffer seen by a search. The current buffer keeps growing while
 * the view is held: the view reads it live (counts, columns, postings), so a
 * search that awaits between segments may see documents added meanwhile; a
 * frozen buffer only loses documents (deletes).
 */
export class BufferView implements IndexView {
  readonly kind = 'buffer' as const;

  constructor(readonly buffer: WriteBuffer) {}

  get docCount(): number {
    return this.buffer.docCount;
  }

  get liveCount(): number {
    return this.buffer.liveCount;
  }

  get docidOf(): Uint32Array {
    return this.buffer.docidOf;
  }

  postings(term: string): TermCursor | null {
    return this.buffer.postingsIterator(term, new MemoryPostingsIterator());
  }

  docFreq(term: string): number {
    return this.buffer.docFreq(term);
  }

  termsWithPrefix(prefix: string): string[] {
    return this.buffer.termsWithPrefix(prefix);
  }

  isLiveOrdinal(ordinal: number): boolean {
    return this.buffer.isLiveOrdinal(ordinal);
  }

  isLive(docid: number): boolean {
    return this.buffer.isLive(docid);
  }

  ordinalOf(docid: number): number {
    return this.buffer.ordinalOf(docid);
  }

  fieldNames(): string[] {
    return this.buffer.fieldNames();
  }

  fieldNorms(field: string): Uint16Array | null {
    return this.buffer.fieldNorms(field);
  }

  fieldStats(field: string): FieldStats | null {
    return this.buffer.fieldStats(field);
  }

  numericColumn(slot: number): NumericColumn | null {
    return this.buffer.numericColumn(slot);
  }

  stringColumn(slot: number): StringColumn | null {
    return this.buffer.stringColumn(slot);
  }
}

/** The parts a search reads, taken at one instant, with shard-wide statistics. */
export class IndexSnapshot {
  constructor(readonly views: readonly IndexView[]) {}

  /** Live documents over all views. */
  get liveDocs(): number {
    let n = 0;
    for (const v of this.views) n += v.liveCount;
    return n;
  }

  /** Documents with the field and the sum of their lengths, summed over the views (see IndexView.fieldStats). */
  fieldStats(field: string): FieldStats {
    let docCount = 0;
    let sumLength = 0;
    for (const v of this.views) {
      const s = v.fieldStats(field);
      if (s === null) continue;
      docCount += s.docCount;
      sumLength += s.sumLength;
    }
    return { docCount, sumLength };
  }

  /** Documents listing the term over all views (deleted segment docs included, as BM25 idf in Lucene). */
  docFreq(term: string): number {
    let n = 0;
    for (const v of this.views) n += v.docFreq(term);
    return n;
  }
}
