/**
 * `_range` (API.md §10.2): listed buckets `[from, to)`; a document counts in
 * each bucket one of its values fits, once. Bucket ordinals are dense:
 * owner × ranges + i, so sub-collectors see every listed range of every
 * owner and the partial lists empty ranges too (the coordinator applies
 * `_min_doc_count`).
 */
import type { SearchReader } from '../search/reader.js';
import type { NumericColumn } from '../values/numeric-column.js';
import { type Collector, type EntryBudget, grownUint32 } from './aggregation-collector.js';
import type { AggregationPartial, RangesPartial } from '@tessera/search-model';

export class RangeCollector implements Collector {
  private column: NumericColumn | null = null;
  private docCounts: Uint32Array;
  /** Owners whose ordinals are reserved (and counted against the budget). */
  private owners = 0;

  constructor(
    private readonly slot: number | null,
    private readonly from: Float64Array,
    private readonly to: Float64Array,
    private readonly keys: readonly string[],
    private readonly subs: readonly Collector[],
    private readonly budget: EntryBudget,
  ) {
    this.docCounts = new Uint32Array(Math.max(1, from.length));
  }

  setReader(reader: SearchReader): void {
    this.column = this.slot === null ? null : reader.numericColumn(this.slot);
    for (const sub of this.subs) sub.setReader(reader);
  }

  collect(ordinal: number, owner: number): void {
    const column = this.column;
    if (column === null || ordinal >= column.docCount || !column.hasValue(ordinal)) return;
    const ranges = this.from.length;
    if (owner >= this.owners) {
      this.budget.take((owner + 1 - this.owners) * ranges);
      this.owners = owner + 1;
      this.docCounts = grownUint32(this.docCounts, this.owners * ranges - 1);
    }
    const from = this.from;
    const to = this.to;
    const offsets = column.offsets;
    const values = column.values;
    const base = owner * ranges;
    for (let i = 0; i < ranges; i++) {
      const lo = from[i]!;
      const hi = to[i]!;
      let fits = false;
      if (offsets === null) {
        const v = values[ordinal]!;
        fits = v >= lo && v < hi;
      } else {
        for (let k = offsets[ordinal]!, end = offsets[ordinal + 1]!; k < end; k++) {
          const v = values[k]!;
          if (v >= lo && v < hi) {
            fits = true;
            break;
          }
        }
      }
      if (!fits) continue;
      const ord = base + i;
      this.docCounts[ord]!++;
      for (let s = 0; s < this.subs.length; s++) this.subs[s]!.collect(ordinal, ord);
    }
  }

  partial(owner: number): RangesPartial {
    const ranges = this.from.length;
    const out: RangesPartial = { kind: 'ranges', keys: this.keys.slice(), counts: [], subs: [] };
    for (let i = 0; i < ranges; i++) {
      const ord = owner * ranges + i;
      out.counts.push(owner < this.owners ? this.docCounts[ord]! : 0);
      const subs: AggregationPartial[] = [];
      for (const sub of this.subs) subs.push(sub.partial(ord));
      out.subs.push(subs);
    }
    return out;
  }
}
