/**
 * Assembles one segment's bytes (layout: segment-format.ts). Flush and merge
 * feed it: the docids, then terms in byte order with their postings, then
 * norms and doc values; `finish()` returns the encoded segment.
 */
import assert from 'node:assert/strict';
import { encode } from '@msgpack/msgpack';
import { ByteSink } from '../postings/byte-sink.js';
import { emptyTermPostingsInfo, PostingsWriter } from '../postings/postings-writer.js';
import type { NumericColumn } from '../values/numeric-column.js';
import type { StringColumn } from '../values/string-column.js';
import {
  SEGMENT_FORMAT, SEGMENT_FORMAT_SPARSE, SEGMENT_MAGIC, SEGMENT_TAIL_PAD_BYTES,
  type FieldHeader, type NumericHeader, type Section, type SegmentHeader, type StringHeader,
} from './segment-format.js';
import { TermDictionaryWriter } from './term-dictionary.js';

export class SegmentWriter {
  private readonly postingsSink = new ByteSink(1 << 20);
  private readonly positionsSink = new ByteSink(1 << 20);
  private readonly postings = new PostingsWriter(this.postingsSink, this.positionsSink);
  private readonly dictionary = new TermDictionaryWriter();
  private readonly info = emptyTermPostingsInfo();
  private readonly fields: { field: string; docCount: number; sumLength: number; norms: Uint16Array }[] = [];
  private readonly numbers: { slot: number; column: NumericColumn }[] = [];
  private readonly strings: { slot: number; column: StringColumn }[] = [];
  private termBytes: Uint8Array = new Uint8Array(0);
  private termLength = 0;

  constructor(readonly docids: Uint32Array) {
    for (let i = 1; i < docids.length; i++) assert.ok(docids[i - 1]! < docids[i]!, 'segment docids must ascend');
  }

  get docCount(): number {
    return this.docids.length;
  }

  /** Start a term (UTF-8 bytes in `term[0, termLength)`, ascending across calls; copied). */
  startTerm(term: Uint8Array, termLength: number, hasPositions: boolean): void {
    if (this.termBytes.length < termLength) this.termBytes = new Uint8Array(termLength * 2);
    this.termBytes.set(term.subarray(0, termLength));
    this.termLength = termLength;
    this.postings.startTerm(hasPositions);
  }

  addDoc(ordinal: number, freq: number, positions: ArrayLike<number> | null, positionsStart: number): void {
    this.postings.addDoc(ordinal, freq, positions, positionsStart);
  }

  /** End the term; a term left without documents is not written. */
  finishTerm(): void {
    if (this.postings.finishTerm(this.info)) this.dictionary.add(this.termBytes, this.termLength, this.info);
  }

  addField(field: string, norms: Uint16Array, docCount: number, sumLength: number): void {
    assert.equal(norms.length, this.docCount, 'norms need one entry per doc');
    this.fields.push({ field, docCount, sumLength, norms });
  }

  addNumeric(slot: number, column: NumericColumn): void {
    assert.equal(column.docCount, this.docCount, 'a column needs one entry per doc');
    this.numbers.push({ slot, column });
  }

  addStrings(slot: number, column: StringColumn): void {
    assert.equal(column.docCount, this.docCount, 'a column needs one entry per doc');
    this.strings.push({ slot, column });
  }

  finish(): Uint8Array {
    const body = new ByteSink(this.postingsSink.length + this.positionsSink.length + this.dictionary.sink.length + 1024);
    const section = (bytes: Uint8Array, pad = 0): Section => {
      body.align(8);
      const offset = body.length;
      body.writeBytes(bytes);
      for (let i = 0; i < pad; i++) body.writeByte(0);
      return [offset, bytes.length];
    };
    const typed = (a: ArrayBufferView): Section => section(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
    const docids = typed(this.docids);
    const dictionary = section(this.dictionary.sink.view());
    const dictionaryBlocks = typed(this.dictionary.blocks());
    const postings = section(this.postingsSink.view(), SEGMENT_TAIL_PAD_BYTES);
    const positions = section(this.positionsSink.view(), SEGMENT_TAIL_PAD_BYTES);
    let sparse = false;
    const fields: FieldHeader[] = this.fields.map(({ field, docCount, sumLength, norms }) => {
      const ordinals = sparseOrdinals(norms.length, (o) => norms[o] !== 0);
      if (ordinals === null) return { field, docCount, sumLength, norms: typed(norms) };
      sparse = true;
      return { field, docCount, sumLength, norms: typed(Uint16Array.from(ordinals, (o) => norms[o]!)), ordinals: typed(ordinals) };
    });
    const numbers: NumericHeader[] = this.numbers.map(({ slot, column }) => {
      const ordinals = column.offsets === null ? sparseOrdinals(column.docCount, (o) => !Number.isNaN(column.min[o]!)) : null;
      if (ordinals !== null) {
        sparse = true;
        return { slot, min: typed(Float64Array.from(ordinals, (o) => column.min[o]!)), ordinals: typed(ordinals) };
      }
      const h: NumericHeader = { slot, min: typed(column.min) };
      if (column.offsets !== null) {
        h.max = typed(column.max);
        h.offsets = typed(column.offsets);
        h.values = typed(column.values);
      }
      return h;
    });
    const strings: StringHeader[] = this.strings.map(({ slot, column }) => {
      const dictionaryBytes = section(column.dictionary.bytes);
      const dictionaryOffsets = typed(column.dictionary.offsets);
      const ordinals = column.offsets === null ? sparseOrdinals(column.docCount, (o) => column.min[o]! >= 0) : null;
      if (ordinals !== null) {
        sparse = true;
        return { slot, dictionaryBytes, dictionaryOffsets, min: typed(Int32Array.from(ordinals, (o) => column.min[o]!)), ordinals: typed(ordinals) };
      }
      const h: StringHeader = { slot, dictionaryBytes, dictionaryOffsets, min: typed(column.min) };
      if (column.offsets !== null) {
        h.max = typed(column.max);
        h.offsets = typed(column.offsets);
        h.ords = typed(column.ords);
      }
      return h;
    });
    const header: SegmentHeader = {
      format: sparse ? SEGMENT_FORMAT_SPARSE : SEGMENT_FORMAT,
      docCount: this.docCount,
      termCount: this.dictionary.termCount,
      docids, dictionary, dictionaryBlocks, postings, positions, fields, numbers, strings,
    };
    const headerBytes = encode(header);
    const bodyStart = align8(8 + headerBytes.length);
    const out = new Uint8Array(bodyStart + body.length);
    const view = new DataView(out.buffer);
    view.setUint32(0, SEGMENT_MAGIC, true);
    view.setUint32(4, headerBytes.length, true);
    out.set(headerBytes, 8);
    out.set(body.view(), bodyStart);
    return out;
  }
}

/**
 * The ordinals of the `docCount` that `has` a value when fewer than a third do (then the ordinals and their values
 * cost less than a value per doc), else null. Documents that bring their own fields make segments of thousands of
 * fields each in a few docs: by ordinal, their norms and doc values cost fields × docs × 2 to 8 bytes, mostly for
 * docs without them (docs/reliability.md, R8).
 */
function sparseOrdinals(docCount: number, has: (ordinal: number) => boolean): Uint32Array | null {
  let count = 0;
  for (let o = 0; o < docCount; o++) if (has(o)) count++;
  if (count * 3 >= docCount) return null;
  const ordinals = new Uint32Array(count);
  for (let o = 0, k = 0; o < docCount; o++) if (has(o)) ordinals[k++] = o;
  return ordinals;
}

export function align8(n: number): number {
  return (n + 7) & ~7;
}
