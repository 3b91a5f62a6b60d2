/**
 * `_filter` with `_term` (API.md §10.2): one bucket holding the documents
 * where any listed field has any listed value, compared exactly with the
 * stored values (not analysed: `"Red"` does not match `"red"`). Its bucket
 * ordinal is the owner's, so its sub-collectors share the parent's owners.
 *
 * String values are looked up once per reader in the column's dictionary,
 * so a document is tested by dictionary ordinal.
 */
import type { SearchReader } from '../search/reader.js';
import type { NumericColumn } from '../values/numeric-column.js';
import type { StringColumn } from '../values/string-column.js';
import { type Collector, grownUint32 } from './aggregation-collector.js';
import type { FilterPartial } from '@tessera/search-model';
import type { FilterTest } from './aggregation-plan.js';

interface BoundTest {
  numbers: NumericColumn | null;
  wanted: ReadonlySet<number>;
  strings: StringColumn | null;
  /** Dictionary ordinals of the wanted strings in the current reader. */
  ordinals: Set<number>;
}

export class FilterCollector implements Collector {
  private docCounts: Uint32Array = new Uint32Array(1);
  private readonly bound: BoundTest[];

  constructor(private readonly tests: readonly FilterTest[], private readonly subs: readonly Collector[]) {
    this.bound = tests.map((t) => ({ numbers: null, wanted: new Set(t.numbers ?? []), strings: null, ordinals: new Set() }));
  }

  setReader(reader: SearchReader): void {
    this.tests.forEach((test, i) => {
      const bound = this.bound[i]!;
      bound.numbers = test.numbers === null ? null : reader.numericColumn(test.slot);
      bound.strings = null;
      bound.ordinals = new Set();
      if (test.strings === null) return;
      const column = reader.stringColumn(test.slot);
      if (column === null) return;
      for (const s of test.strings) {
        const o = column.dictionary.lookup(s);
        if (o >= 0) bound.ordinals.add(o);
      }
      if (bound.ordinals.size > 0) bound.strings = column;
    });
    for (const sub of this.subs) sub.setReader(reader);
  }

  collect(ordinal: number, owner: number): void {
    if (!this.matches(ordinal)) return;
    this.docCounts = grownUint32(this.docCounts, owner);
    this.docCounts[owner]!++;
    for (let s = 0; s < this.subs.length; s++) this.subs[s]!.collect(ordinal, owner);
  }

  private matches(ordinal: number): boolean {
    for (let t = 0; t < this.bound.length; t++) {
      const test = this.bound[t]!;
      const strings = test.strings;
      if (strings !== null && ordinal < strings.docCount) {
        const n = strings.valueCount(ordinal);
        for (let k = 0; k < n; k++) if (test.ordinals.has(strings.ordAt(ordinal, k))) return true;
      }
      const numbers = test.numbers;
      if (numbers !== null && ordinal < numbers.docCount) {
        const n = numbers.valueCount(ordinal);
        for (let k = 0; k < n; k++) if (test.wanted.has(numbers.valueAt(ordinal, k))) return true;
      }
    }
    return false;
  }

  partial(owner: number): FilterPartial {
    return {
      kind: 'filter',
      count: owner < this.docCounts.length ? this.docCounts[owner]! : 0,
      subs: this.subs.map((sub) => sub.partial(owner)),
    };
  }
}
