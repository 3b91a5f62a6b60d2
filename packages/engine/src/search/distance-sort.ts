/**
 * Sorting by distance to a reference (API.md §9.5, `{"f": {"_value": ref}}`,
 * query-string `sort=f:ref`): numbers, dates, times and timedeltas by the
 * absolute difference (a date reference may use date math), strings by a
 * `_metric` (string-metrics.ts; Jaro by default), geo by great-circle metres
 * (geo-sort.ts). Ascending ranks by a document's smallest distance,
 * descending by its largest; documents without a value come last either way.
 *
 * `distanceSortPlan` is the one place that decides how a field type measures
 * distance: a type whose values are not numbers in a slot brings a
 * `ValueDistance`, as `StringValueDistance` below and geo-sort.ts do.
 */
import { convertValue, isDateType, isNumericType, type FieldSpec } from '@tessera/schema';
import { queryErrors, type SortKey } from '@tessera/search-model';
import { geoSortPlan } from './geo-sort.js';
import type { SearchReader } from './reader.js';
import type { ReaderDistance, SortPlan, ValueDistance } from '../collect/sort-collector.js';
import { DEFAULT_STRING_METRIC, distanceTo, isStringMetric, type StringMetricName } from './string-metrics.js';

/** The plan of a sort key with a `_value` reference on the field `spec`. */
export function distanceSortPlan(key: SortKey, spec: FieldSpec): SortPlan {
  const type = spec.type;
  if (isNumericType(type) || isDateType(type) || type === 'time' || type === 'timedelta') {
    const reference = numericReference(key, spec);
    return { kind: 'slot', slot: spec.slot, order: key.order, reference };
  }
  if (type === 'geo') return geoSortPlan(key, spec);
  if (type === 'text' || type === 'keyword' || type === 'uuid') {
    const metric = key.metric ?? DEFAULT_STRING_METRIC;
    if (!isStringMetric(metric)) throw queryErrors.invalidSort(`Unknown metric: ${metric}`);
    return { kind: 'distance', slot: spec.slot, order: key.order, distance: new StringValueDistance(spec.slot, metric, stringReference(key)) };
  }
  throw queryErrors.invalidSort(`Sorting by distance does not apply to field '${key.path}' of type ${type}`);
}

/** The reference of a number or date field, converted as the field converts values (dates with date math). */
function numericReference(key: SortKey, spec: FieldSpec): number {
  const type = isNumericType(spec.type) ? 'floating' : spec.type;
  try {
    return Number(convertValue(type, key.value, key.path).index);
  } catch {
    throw queryErrors.invalidSort(`Invalid _value for sorting by '${key.path}' (${spec.type}): ${JSON.stringify(key.value).slice(0, 100)}`);
  }
}

function stringReference(key: SortKey): string {
  const v = key.value;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw queryErrors.invalidSort(`Invalid _value for sorting by '${key.path}': expected a string`);
}

/**
 * Distances of a string slot's values to a reference. Within one reader a
 * value's distance depends only on its dictionary ordinal, so each distinct
 * value is measured once (a document-sized sort measures each value once, not
 * once per document holding it).
 */
export class StringValueDistance implements ValueDistance {
  private readonly measure: (value: string) => number;

  constructor(private readonly slot: number, readonly metric: StringMetricName, readonly reference: string) {
    this.measure = distanceTo(metric, reference);
  }

  bind(reader: SearchReader): ReaderDistance | null {
    const column = reader.stringColumn(this.slot);
    if (column === null) return null;
    const dictionary = column.dictionary;
    const cache = new Float64Array(dictionary.count).fill(NaN);
    const measure = this.measure;
    return {
      distance(ordinal: number, largest: boolean): number {
        if (ordinal >= column.docCount) return NaN;
        const n = column.valueCount(ordinal);
        let best = NaN;
        for (let k = 0; k < n; k++) {
          const ord = column.ordAt(ordinal, k);
          let d = cache[ord]!;
          if (d !== d) d = cache[ord] = measure(dictionary.term(ord));
          if (best !== best || (largest ? d > best : d < best)) best = d;
        }
        return best;
      },
    };
  }
}
