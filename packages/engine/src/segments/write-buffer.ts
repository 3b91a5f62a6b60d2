/**
 * The write buffer: the mutable, immediately searchable segment. Documents
 * get buffer ordinals in add order; postings go to shared pools
 * (postings/buffered-postings.ts), per field a Uint16Array of lengths, per
 * slot a doc-values builder. An update (add of a docid already here) deletes
 * the old ordinal and adds a new one; a delete marks the ordinal. Queries see
 * it as one more segment (same method names as SegmentReader); flush.ts turns
 * it into an immutable segment once it passes its byte budget.
 */
import assert from 'node:assert/strict';
import { compareCodePoints } from '@tessera/documents';
import { BufferedPostings, type PostingsSnapshot, type TextTokens } from '../postings/buffered-postings.js';
import { MemoryPostingsIterator } from '../postings/memory-postings-iterator.js';
import { NumericColumnBuilder, StringColumnBuilder, type StringValues } from '../values/column-builder.js';
import { packStrings, type PackedStrings } from '../values/packed-strings.js';
import type { NumericColumn } from '../values/numeric-column.js';
import type { StringColumn } from '../values/string-column.js';
import { NORM_MAX, type FieldStats } from './segment-format.js';

/** Position of a token indexed without one (keywords, `stem_some` stems); any negative position means none. */
export const NO_TOKEN_POSITION = -1;

/**
 * What the analysis layer hands to the engine for one document: its tokens
 * as two flat lists (no object or array per term), in the order met.
 */
export interface IndexableDocument {
  /** The term of each token: a term is listed once per occurrence (its frequency is that count). */
  readonly terms: readonly string[];
  /**
   * The position of each token of `terms`, or NO_TOKEN_POSITION. A term with
   * an occurrence without a position is indexed without positions.
   */
  readonly positions: ArrayLike<number>;
  /** Token count per field (BM25 length normalisation). */
  readonly fieldLengths?: readonly { readonly field: string; readonly length: number }[];
  readonly numbers?: readonly { readonly slot: number; readonly values: readonly number[] }[];
  readonly strings?: readonly { readonly slot: number; readonly values: readonly string[] }[];
  /** Tokens of the text values, analysed on the analysis thread (added after `terms`), with their field lengths. */
  readonly text?: AnalysedText | undefined;
}

/** Text analysed elsewhere (indexing/text-analysis.ts): usable once `resolved`. */
export interface AnalysedText extends TextTokens {
  readonly resolved: boolean;
  /** Resolves once `resolved` (never rejects). */
  readonly ready: Promise<void>;
  /** Positions taken per field prefix (`''`: global terms). */
  readonly lengths: ReadonlyMap<string, number>;
}

/** Per-document overhead: the docid map entry and per-doc arrays. */
const DOC_OVERHEAD_BYTES = 40;

export class WriteBuffer {
  /** Ordinal → docid. */
  docidOf: Uint32Array = new Uint32Array(1024);
  /** Ordinal → 1 when deleted or replaced. */
  deleted: Uint8Array = new Uint8Array(1024);
  /** Ordinals assigned so far (deleted ones included). */
  docCount = 0;
  liveCount = 0;
  /** Whether docids were added in ascending order (ordinal order is then docid order). */
  inDocidOrder = true;
  /** Highest op-log seq applied (set by the caller; recorded in the manifest at flush). */
  seq = 0;
  readonly postings = new BufferedPostings();
  private readonly ordinals = new Map<number, number>();
  private readonly fields = new Map<string, { lengths: Uint16Array; docCount: number; sumLength: number; full: Uint32Array | null }>();
  private readonly numbers = new Map<number, NumericColumnBuilder>();
  private readonly strings = new Map<number, StringColumnBuilder>();
  private frozen = false;

  /** Index a document (replacing the buffer's copy of the same docid). */
  add(docid: number, doc: IndexableDocument): void {
    assert.ok(!this.frozen, 'the write buffer is frozen for flushing');
    assert.ok(Number.isInteger(docid) && docid >= 1 && docid < 0x7fffffff, 'docid out of range');
    const text = doc.text;
    assert.ok(text === undefined || text.resolved, 'a document is added once its text is analysed');
    this.delete(docid);
    const ordinal = this.docCount;
    assert.ok(ordinal < 0x3fffffff, 'write buffer ordinals exhausted');
    if (ordinal === this.docidOf.length) {
      const docidOf = new Uint32Array(ordinal * 2);
      docidOf.set(this.docidOf);
      this.docidOf = docidOf;
      const deleted = new Uint8Array(ordinal * 2);
      deleted.set(this.deleted);
      this.deleted = deleted;
    }
    if (ordinal > 0 && docid < this.docidOf[ordinal - 1]!) this.inDocidOrder = false;
    if (ordinal > 0 && docid === this.docidOf[ordinal - 1]!) this.inDocidOrder = false;
    this.docidOf[ordinal] = docid;
    this.ordinals.set(docid, ordinal);
    this.docCount = ordinal + 1;
    this.liveCount++;
    this.postings.addDocument(ordinal, doc.terms, doc.positions, text);
    if (doc.fieldLengths !== undefined) {
      for (const { field, length } of doc.fieldLengths) this.addFieldLength(ordinal, field, length);
    }
    if (text !== undefined) {
      for (const [field, length] of text.lengths) this.addFieldLength(ordinal, field, length);
    }
    if (doc.numbers !== undefined) {
      for (const { slot, values } of doc.numbers) {
        let builder = this.numbers.get(slot);
        if (builder === undefined) this.numbers.set(slot, (builder = new NumericColumnBuilder()));
        builder.add(ordinal, values);
      }
    }
    if (doc.strings !== undefined) {
      for (const { slot, values } of doc.strings) {
        let builder = this.strings.get(slot);
        if (builder === undefined) this.strings.set(slot, (builder = new StringColumnBuilder()));
        builder.add(ordinal, values);
      }
    }
  }

  /** A field's length in document `ordinal` (BM25 statistics); fields of a document are added once each. */
  private addFieldLength(ordinal: number, field: string, length: number): void {
    let f = this.fields.get(field);
    if (f === undefined) {
      f = { lengths: new Uint16Array(this.docidOf.length), docCount: 0, sumLength: 0, full: null };
      this.fields.set(field, f);
    }
    if (f.lengths.length < this.docidOf.length) {
      const grown = new Uint16Array(this.docidOf.length);
      grown.set(f.lengths);
      f.lengths = grown;
    }
    f.lengths[ordinal] = Math.min(length, NORM_MAX);
    if (length > NORM_MAX) {
      // Keep the exact length of the rare huge field for the statistics.
      f.full ??= new Uint32Array(0);
      const grown = new Uint32Array(f.full.length + 2);
      grown.set(f.full);
      grown[f.full.length] = ordinal;
      grown[f.full.length + 1] = length;
      f.full = grown;
    }
    if (length > 0) {
      f.docCount++;
      f.sumLength += length;
    }
  }

  /** Delete the buffer's copy of `docid`; false when it has none. */
  delete(docid: number): boolean {
    const ordinal = this.ordinals.get(docid);
    if (ordinal === undefined) return false;
    this.ordinals.delete(docid);
    this.deleted[ordinal] = 1;
    this.liveCount--;
    for (const f of this.fields.values()) {
      if (ordinal >= f.lengths.length) continue;
      const length = this.exactLength(f, ordinal);
      if (length > 0) {
        f.docCount--;
        f.sumLength -= length;
      }
    }
    return true;
  }

  /** Stop accepting adds (deletes still apply): the buffer is being flushed. */
  freeze(): void {
    this.frozen = true;
  }

  get isFrozen(): boolean {
    return this.frozen;
  }

  isLive(docid: number): boolean {
    return this.ordinals.has(docid);
  }

  /** The buffer ordinal of `docid`'s live copy, or −1. */
  ordinalOf(docid: number): number {
    return this.ordinals.get(docid) ?? -1;
  }

  isLiveOrdinal(ordinal: number): boolean {
    return this.deleted[ordinal] === 0;
  }

  /** Postings of `term` in docid order over live docs, or null. */
  postingsIterator(term: string, reuse?: MemoryPostingsIterator): MemoryPostingsIterator | null {
    const id = this.postings.termId(term);
    if (id < 0) return null;
    return (reuse ?? new MemoryPostingsIterator()).reset(this.postings, id, this.docidOf, this.deleted, this.inDocidOrder);
  }

  /** The term's document frequency (deleted docs included, as in segments), or 0. */
  docFreq(term: string): number {
    const id = this.postings.termId(term);
    return id < 0 ? 0 : this.postings.docFreq(id);
  }

  /** Distinct terms indexed (including terms whose documents were all deleted). */
  get termCount(): number {
    return this.postings.termCount;
  }

  /** Terms starting with `prefix`, sorted by code point (allocates: the buffer is small and short-lived). */
  termsWithPrefix(prefix: string): string[] {
    const out: string[] = [];
    for (const term of this.postings.names) if (term.startsWith(prefix)) out.push(term);
    return out.sort(compareCodePoints);
  }

  /** Field lengths by buffer ordinal (saturated at NORM_MAX; a view valid until the next add). */
  fieldNorms(field: string): Uint16Array | null {
    const f = this.fields.get(field);
    return f === undefined ? null : f.lengths.subarray(0, this.docCount);
  }

  /** The field's statistics over live docs. */
  fieldStats(field: string): FieldStats | null {
    const f = this.fields.get(field);
    return f === undefined ? null : { docCount: f.docCount, sumLength: f.sumLength };
  }

  fieldNames(): string[] {
    return [...this.fields.keys()];
  }

  /** The exact (unsaturated) length of `field` at `ordinal`. */
  fieldLength(field: string, ordinal: number): number {
    const f = this.fields.get(field);
    return f === undefined || ordinal >= f.lengths.length ? 0 : this.exactLength(f, ordinal);
  }

  numericColumn(slot: number): NumericColumn | null {
    return this.numbers.get(slot)?.column(this.docCount) ?? null;
  }

  stringColumn(slot: number): StringColumn | null {
    return this.strings.get(slot)?.column(this.docCount) ?? null;
  }

  numericSlots(): number[] {
    return [...this.numbers.keys()];
  }

  stringSlots(): number[] {
    return [...this.strings.keys()];
  }

  /** Estimated bytes held, JS heap and array buffers (the flush trigger compares it with the buffer budget). */
  memoryBytes(): number {
    let bytes = this.postings.bytes() + this.docidOf.byteLength + this.deleted.byteLength + this.ordinals.size * DOC_OVERHEAD_BYTES;
    for (const f of this.fields.values()) bytes += f.lengths.byteLength;
    for (const b of this.numbers.values()) bytes += b.bytes();
    for (const b of this.strings.values()) bytes += b.bytes();
    return bytes;
  }

  private exactLength(f: FieldLengths, ordinal: number): number {
    return exactFieldLength(f, ordinal);
  }

  /**
   * Copies of what a flush reads (flush.ts FlushSource), plain data that can
   * cross to the segment worker. Only once frozen: later adds would be missed.
   */
  flushSnapshot(): FlushSnapshot {
    assert.ok(this.frozen, 'only a frozen write buffer is flushed');
    const n = this.docCount;
    const numeric: Array<FlushSnapshot['numeric'][number]> = [];
    for (const [slot, builder] of this.numbers) {
      const c = builder.column(n);
      // A single-valued column is one array in three roles: one copy (a structured clone keeps the sharing).
      const min = c.min.slice();
      const max = c.max === c.min ? min : c.max.slice();
      numeric.push({ slot, docCount: c.docCount, min, max, offsets: c.offsets?.slice() ?? null, values: c.values === c.min ? min : c.values.slice() });
    }
    // The dictionaries are sorted on the segment worker (buildStringColumn): only the values are copied here.
    const strings: Array<FlushSnapshot['strings'][number]> = [];
    for (const [slot, builder] of this.strings) {
      const v = builder.values(n);
      strings.push({ slot, docCount: n, strings: packStrings(v.strings), localIds: v.localIds.slice(), offsets: v.offsets.slice(), multi: v.multi });
    }
    return {
      docCount: n, deleted: this.deleted.slice(0, n), inDocidOrder: this.inDocidOrder, docidOf: this.docidOf.slice(0, n),
      postings: this.postings.snapshot(),
      fields: [...this.fields].map(([name, f]) => ({ name, lengths: f.lengths.slice(0, n), full: f.full?.slice() ?? null })),
      numeric, strings,
    };
  }
}

interface FieldLengths {
  readonly lengths: Uint16Array;
  readonly full: Uint32Array | null;
}

/** A field's exact (unsaturated) length at `ordinal`: saturated norms keep the rare huge lengths apart in `full`. */
export function exactFieldLength(f: FieldLengths, ordinal: number): number {
  const length = f.lengths[ordinal]!;
  if (length < NORM_MAX || f.full === null) return length;
  for (let i = 0; i < f.full.length; i += 2) if (f.full[i] === ordinal) return f.full[i + 1]!;
  return length;
}

/** WriteBuffer.flushSnapshot: typed arrays, strings and numbers only (structured-clone safe). */
export interface FlushSnapshot {
  readonly docCount: number;
  readonly deleted: Uint8Array;
  readonly inDocidOrder: boolean;
  readonly docidOf: Uint32Array;
  readonly postings: PostingsSnapshot;
  readonly fields: ReadonlyArray<{ readonly name: string } & FieldLengths>;
  readonly numeric: ReadonlyArray<{
    readonly slot: number; readonly docCount: number; readonly min: Float64Array; readonly max: Float64Array;
    readonly offsets: Uint32Array | null; readonly values: Float64Array;
  }>;
  readonly strings: ReadonlyArray<{ readonly slot: number; readonly strings: PackedStrings } & Omit<StringValues, 'strings'>>;
}

/** Code point order (UTF-8 byte order), which segments use: @tessera/documents' one string order. */
export { compareCodePoints };
