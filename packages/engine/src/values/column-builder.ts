/**
 * Growable doc values of one slot in the write buffer, appended by buffer
 * ordinal (ordinals ascend as documents are added). A doc that never got the
 * slot is filled as missing lazily, so adding a doc costs nothing for the
 * slots it lacks.
 */
import assert from 'node:assert/strict';
import { NumericColumn } from './numeric-column.js';
import { StringColumn } from './string-column.js';
import { StringDictionary } from './string-dictionary.js';

export class NumericColumnBuilder {
  private min: Float64Array = new Float64Array(16).fill(NaN);
  private max: Float64Array = new Float64Array(16).fill(NaN);
  /** CSR starts by ordinal; offsets[filled] = valuesLength. */
  private offsets = new Uint32Array(17);
  private values = new Float64Array(16);
  private valuesLength = 0;
  /** Ordinals [0, filled) have their entries. */
  private filled = 0;
  private multi = false;

  add(ordinal: number, values: ArrayLike<number>): void {
    assert.ok(ordinal >= this.filled, 'doc values must be added in ascending ordinal order');
    this.fillTo(ordinal);
    let lo = NaN;
    let hi = NaN;
    let n = 0;
    this.ensureValues(values.length);
    for (let k = 0; k < values.length; k++) {
      const v = values[k]!;
      if (v !== v) continue;
      this.values[this.valuesLength++] = v;
      if (n === 0 || v < lo) lo = v;
      if (n === 0 || v > hi) hi = v;
      n++;
    }
    if (n > 1) this.multi = true;
    this.min[ordinal] = lo;
    this.max[ordinal] = hi;
    this.filled = ordinal + 1;
    this.offsets[this.filled] = this.valuesLength;
  }

  /** A column over ordinals [0, docCount) (views of the builder's arrays: valid until the next add). */
  column(docCount: number): NumericColumn {
    this.fillTo(docCount);
    const min = this.min.subarray(0, docCount);
    if (!this.multi) return new NumericColumn(docCount, min, min, null, min);
    return new NumericColumn(docCount, min, this.max.subarray(0, docCount), this.offsets.subarray(0, docCount + 1), this.values.subarray(0, this.valuesLength));
  }

  bytes(): number {
    return this.min.byteLength + this.max.byteLength + this.offsets.byteLength + this.values.byteLength;
  }

  private fillTo(ordinal: number): void {
    if (ordinal + 1 >= this.min.length) {
      const capacity = Math.max(this.min.length * 2, ordinal + 2);
      this.min = growFloat(this.min, capacity);
      this.max = growFloat(this.max, capacity);
      const offsets = new Uint32Array(capacity + 1);
      offsets.set(this.offsets);
      this.offsets = offsets;
    }
    for (let i = this.filled; i < ordinal; i++) this.offsets[i + 1] = this.valuesLength;
    if (ordinal > this.filled) this.filled = ordinal;
  }

  private ensureValues(extra: number): void {
    if (this.valuesLength + extra <= this.values.length) return;
    const grown = new Float64Array(Math.max(this.values.length * 2, this.valuesLength + extra));
    grown.set(this.values.subarray(0, this.valuesLength));
    this.values = grown;
  }
}

export class StringColumnBuilder {
  private readonly ids = new Map<string, number>();
  private readonly strings: string[] = [];
  private offsets = new Uint32Array(17);
  private localIds = new Int32Array(16);
  private length = 0;
  private filled = 0;
  private multi = false;
  private stringBytes = 0;
  private cached: { docCount: number; length: number; column: StringColumn } | undefined;

  add(ordinal: number, values: readonly string[]): void {
    assert.ok(ordinal >= this.filled, 'doc values must be added in ascending ordinal order');
    this.fillTo(ordinal);
    if (this.length + values.length > this.localIds.length) {
      const grown = new Int32Array(Math.max(this.localIds.length * 2, this.length + values.length));
      grown.set(this.localIds.subarray(0, this.length));
      this.localIds = grown;
    }
    for (const value of values) {
      let id = this.ids.get(value);
      if (id === undefined) {
        id = this.strings.length;
        this.ids.set(value, id);
        this.strings.push(value);
        this.stringBytes += 2 * value.length + 64;
      }
      this.localIds[this.length++] = id;
    }
    if (values.length > 1) this.multi = true;
    this.filled = ordinal + 1;
    this.offsets[this.filled] = this.length;
    this.cached = undefined;
  }

  /** A column over ordinals [0, docCount) (buildStringColumn), cached until the next add. */
  column(docCount: number): StringColumn {
    if (this.cached !== undefined && this.cached.docCount === docCount) return this.cached.column;
    const column = buildStringColumn(this.values(docCount));
    this.cached = { docCount, length: this.length, column };
    return column;
  }

  /**
   * The values over ordinals [0, docCount) before the dictionary is sorted:
   * views of the builder's arrays, valid until the next add. A flush copies
   * them and leaves the sort (buildStringColumn) to the segment worker.
   */
  values(docCount: number): StringValues {
    this.fillTo(docCount);
    return {
      docCount, strings: this.strings, localIds: this.localIds.subarray(0, this.length), offsets: this.offsets.subarray(0, docCount + 1), multi: this.multi,
    };
  }

  bytes(): number {
    return this.offsets.byteLength + this.localIds.byteLength + this.stringBytes;
  }

  private fillTo(ordinal: number): void {
    if (ordinal + 1 >= this.offsets.length) {
      const offsets = new Uint32Array(Math.max(this.offsets.length * 2, ordinal + 2));
      offsets.set(this.offsets);
      this.offsets = offsets;
    }
    for (let i = this.filled; i < ordinal; i++) this.offsets[i + 1] = this.length;
    if (ordinal > this.filled) this.filled = ordinal;
  }
}

/** A slot's string values by ordinal before their dictionary is sorted (StringColumnBuilder.values). */
export interface StringValues {
  readonly docCount: number;
  /** Each distinct value once, in first-seen order: its index is its id. */
  readonly strings: readonly string[];
  /** The ids of every value, ordinal after ordinal. */
  readonly localIds: Int32Array;
  /** CSR starts of each ordinal's values in `localIds` (docCount + 1). */
  readonly offsets: Uint32Array;
  readonly multi: boolean;
}

/** Sort the dictionary and map the values' ids to sorted ordinals (O(n log n) in distinct values, O(n) in values). */
export function buildStringColumn(v: StringValues): StringColumn {
  const strings = v.strings;
  const dictionary = StringDictionary.build(strings);
  const rank = new Int32Array(strings.length);
  for (let id = 0; id < strings.length; id++) rank[id] = dictionary.lookup(strings[id]!);
  const { docCount, multi } = v;
  const min = new Int32Array(docCount).fill(-1);
  const max = multi ? new Int32Array(docCount).fill(-1) : min;
  const ords = multi ? new Int32Array(v.localIds.length) : min;
  for (let i = 0; i < docCount; i++) {
    const start = v.offsets[i]!;
    const end = v.offsets[i + 1]!;
    let lo = -1;
    let hi = -1;
    for (let k = start; k < end; k++) {
      const ord = rank[v.localIds[k]!]!;
      if (multi) ords[k] = ord;
      if (lo < 0 || ord < lo) lo = ord;
      if (ord > hi) hi = ord;
    }
    min[i] = lo;
    if (multi) max[i] = hi;
  }
  return new StringColumn(docCount, dictionary, min, max, multi ? v.offsets.slice() : null, ords);
}

function growFloat(a: Float64Array, capacity: number): Float64Array {
  const grown = new Float64Array(capacity).fill(NaN);
  grown.set(a);
  return grown;
}
