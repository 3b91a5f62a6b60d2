/**
 * Metric aggregations (API.md §10.1) per owner bucket: every value of every
 * document counts (a document with three values adds three). One class for
 * all metric types, each keeping only what its result needs:
 *
 * | type                                    | keeps                          |
 * |-----------------------------------------|--------------------------------|
 * | `_count`                                | count (strings too)            |
 * | `_min`, `_max`                          | count, min, max                |
 * | `_sum`, `_avg`, `_stats`                | + exact sum                    |
 * | `_variance`, `_std_deviation`, `_extended_stats` | + exact sum of squares |
 * | `_median`, `_mode`                      | + every value (sent distinct, with counts) |
 */
import type { NumericColumn } from '../values/numeric-column.js';
import type { StringColumn } from '../values/string-column.js';
import type { SearchReader } from '../search/reader.js';
import { type Collector, type EntryBudget, grownFloat64 } from './aggregation-collector.js';
import { addExact, addSquareExact, type MetricPartial, type MetricType } from '@tessera/search-model';
import type { BoundField } from './aggregation-plan.js';

const SUM_TYPES: ReadonlySet<MetricType> = new Set<MetricType>(['_sum', '_avg', '_stats', '_variance', '_std_deviation', '_extended_stats']);
const SQUARE_TYPES: ReadonlySet<MetricType> = new Set<MetricType>(['_variance', '_std_deviation', '_extended_stats']);

export class MetricCollector implements Collector {
  private numbers: NumericColumn | null = null;
  private strings: StringColumn | null = null;
  private readonly needSum: boolean;
  private readonly needSquares: boolean;
  private readonly needValues: boolean;
  private counts: Float64Array = new Float64Array(1);
  private mins: Float64Array = new Float64Array(1).fill(Number.NaN);
  private maxs: Float64Array = new Float64Array(1).fill(Number.NaN);
  private readonly sums: number[][] = [];
  private readonly squares: number[][] = [];
  private readonly values: Float64Array[] = [];
  private readonly valueLengths: number[] = [];

  constructor(type: MetricType, private readonly field: BoundField | null, private readonly budget: EntryBudget) {
    this.needSum = SUM_TYPES.has(type);
    this.needSquares = SQUARE_TYPES.has(type);
    this.needValues = type === '_median' || type === '_mode';
  }

  setReader(reader: SearchReader): void {
    const field = this.field;
    this.numbers = field === null || field.strings ? null : reader.numericColumn(field.slot);
    this.strings = field !== null && field.strings ? reader.stringColumn(field.slot) : null;
  }

  collect(ordinal: number, owner: number): void {
    if (owner >= this.counts.length) this.grow(owner);
    const column = this.numbers;
    if (column === null) {
      // Only `_count` reaches here with strings (aggregation-plan.ts refuses the others).
      const strings = this.strings;
      if (strings !== null && ordinal < strings.docCount) this.counts[owner] += strings.valueCount(ordinal);
      return;
    }
    if (ordinal >= column.docCount) return;
    const offsets = column.offsets;
    if (offsets === null) {
      const v = column.values[ordinal]!;
      if (v === v) this.add(owner, v);
      return;
    }
    const values = column.values;
    for (let k = offsets[ordinal]!, end = offsets[ordinal + 1]!; k < end; k++) this.add(owner, values[k]!);
  }

  private add(owner: number, v: number): void {
    this.counts[owner]!++;
    const min = this.mins[owner]!;
    if (!(v >= min)) this.mins[owner] = v;
    const max = this.maxs[owner]!;
    if (!(v <= max)) this.maxs[owner] = v;
    if (this.needSum) addExact(this.sums[owner] ??= [], v);
    if (this.needSquares) addSquareExact(this.squares[owner] ??= [], v);
    if (this.needValues) {
      let list = this.values[owner];
      const n = this.valueLengths[owner] ?? 0;
      if (list === undefined || n === list.length) {
        const grown = new Float64Array(Math.max(16, n * 2));
        if (list !== undefined) grown.set(list);
        this.values[owner] = list = grown;
      }
      list[n] = v;
      this.valueLengths[owner] = n + 1;
    }
  }

  private grow(owner: number): void {
    this.counts = grownFloat64(this.counts, owner);
    this.mins = grownFloat64(this.mins, owner, Number.NaN);
    this.maxs = grownFloat64(this.maxs, owner, Number.NaN);
  }

  partial(owner: number): MetricPartial {
    const inRange = owner < this.counts.length;
    const count = inRange ? this.counts[owner]! : 0;
    const out: MetricPartial = { kind: 'metric', count, min: null, max: null };
    if (count > 0) {
      out.min = this.mins[owner]!;
      out.max = this.maxs[owner]!;
    }
    if (this.needSum) out.sum = (this.sums[owner] ?? []).slice();
    if (this.needSquares) out.squares = (this.squares[owner] ?? []).slice();
    if (this.needValues) {
      const n = this.valueLengths[owner] ?? 0;
      const sorted = n === 0 ? new Float64Array(0) : this.values[owner]!.subarray(0, n).sort();
      const values: number[] = [];
      const valueCounts: number[] = [];
      for (let i = 0; i < n;) {
        const v = sorted[i]!;
        let j = i + 1;
        while (j < n && sorted[j] === v) j++;
        values.push(v);
        valueCounts.push(j - i);
        i = j;
      }
      this.budget.take(values.length);
      out.values = values;
      out.valueCounts = valueCounts;
    }
    return out;
  }
}
