/**
 * `_values`/`_terms` over a numeric column (each distinct value is a key)
 * and `_histogram` (key `floor((v − shift) / interval) · interval + shift`,
 * API.md §10.2). Keys are kept as numbers and written as strings only for
 * the partial, by the field type's format (aggregation-plan.ts `keyFormat`).
 */
import type { SearchReader } from '../search/reader.js';
import type { NumericColumn } from '../values/numeric-column.js';
import type { Collector, EntryBudget } from './aggregation-collector.js';
import { KeyedBucketCollector } from './keyed-buckets.js';
import type { KeyFormat } from './aggregation-plan.js';

export class NumericBucketCollector extends KeyedBucketCollector {
  /** Distinct value (or histogram bucket number) → key id. */
  private readonly keyIds = new Map<number, number>();
  private readonly keyValues: number[] = [];
  private column: NumericColumn | null = null;
  private readonly interval: number;
  private readonly shift: number;

  constructor(
    private readonly slot: number,
    private readonly format: KeyFormat,
    histogram: { readonly interval: number; readonly shift: number } | null,
    subs: readonly Collector[], topLevel: boolean, budget: EntryBudget,
  ) {
    super(subs, topLevel, budget);
    // interval 0 = every distinct value is its own key.
    this.interval = histogram === null ? 0 : histogram.interval;
    this.shift = histogram === null ? 0 : histogram.shift;
  }

  protected bindReader(reader: SearchReader): void {
    this.column = reader.numericColumn(this.slot);
  }

  collect(ordinal: number, owner: number): void {
    const column = this.column;
    if (column === null || ordinal >= column.docCount) return;
    this.stamp++;
    const offsets = column.offsets;
    const values = column.values;
    if (offsets === null) {
      const v = values[ordinal]!;
      if (v === v) this.value(ordinal, owner, v);
      return;
    }
    for (let k = offsets[ordinal]!, end = offsets[ordinal + 1]!; k < end; k++) this.value(ordinal, owner, values[k]!);
  }

  private value(ordinal: number, owner: number, v: number): void {
    const bucket = this.interval === 0 ? v : Math.floor((v - this.shift) / this.interval);
    let id = this.keyIds.get(bucket);
    if (id === undefined) {
      id = this.keyValues.length;
      this.keyValues.push(this.interval === 0 ? v : bucket * this.interval + this.shift);
      this.keyIds.set(bucket, id);
    }
    this.hit(ordinal, owner, id);
  }

  protected keyString(id: number): string {
    return this.format(this.keyValues[id]!);
  }
}
