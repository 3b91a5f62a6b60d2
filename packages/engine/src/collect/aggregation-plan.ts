/**
 * A parsed `_aggs` tree bound to one schema (API.md §10): each aggregation's
 * field resolved to its value slot and column kind, bucket keys' format
 * chosen by the field type, `_range` bounds and `_filter` values converted
 * to what the columns hold. Done once per search, before any document is
 * read, so every 400 comes before work.
 *
 * Values come from the field's own value slot (`fieldSpec` slot): strings
 * (keyword, text) from its string column, numbers (integer, positive,
 * floating, boolean 0/1, dates as epoch seconds) from its numeric column. An
 * unknown field, or one indexed without values, aggregates nothing.
 *
 * Type rules (Xapiand's): `_count`, `_values`, `_terms` and `_filter` take any
 * field; the other metrics, `_histogram` and `_range` need a numeric or date
 * field (else 400).
 */
import {
  convertValue, type FieldSpec, fieldSpec, formatDate, isDateType, isNumericType, type Schema, type ScalarType,
} from '@tessera/schema';
import { type Analyzer, analyzerFor } from '../analysis/analyzer.js';
import {
  type AggregationRequest, aggregationErrors, type AggregationSpec, isMetricType, type MetricType, type RangeRequest,
} from '@tessera/search-model';

/** Where a field's values are: its slot, and whether the slot holds strings or numbers. */
export interface BoundField {
  readonly slot: number;
  readonly strings: boolean;
  readonly type: ScalarType;
}

/** Bucket keys are strings (API.md §10.2): how a numeric value of the field is written as one. */
export type KeyFormat = (value: number) => string;

export type PlanNode =
  | { readonly kind: 'metric'; readonly type: MetricType; readonly field: BoundField | null }
  | {
    readonly kind: 'strings'; readonly field: BoundField;
    /** `values`: each stored string; `lower`: keyword terms (lower-cased); `text`: the analyser's terms. */
    readonly keys: 'values' | 'lower' | 'text'; readonly analyzer: Analyzer | null; readonly subs: readonly PlanNode[];
  }
  | {
    readonly kind: 'numbers'; readonly field: BoundField; readonly format: KeyFormat;
    /** `_histogram` only; absent for `_values`/`_terms` (each distinct value is a key). */
    readonly histogram: { readonly interval: number; readonly shift: number } | null; readonly subs: readonly PlanNode[];
  }
  | {
    readonly kind: 'range'; readonly field: BoundField | null; readonly from: Float64Array; readonly to: Float64Array;
    readonly keys: readonly string[]; readonly subs: readonly PlanNode[];
  }
  | { readonly kind: 'filter'; readonly tests: readonly FilterTest[]; readonly subs: readonly PlanNode[] }
  /** `_values`, `_terms` or `_histogram` over a field without values: no buckets. */
  | { readonly kind: 'no-buckets' };

/** One field of a `_filter`: the values a document's value must equal (strings, or numbers). */
export interface FilterTest {
  readonly slot: number;
  readonly strings: readonly string[] | null;
  readonly numbers: readonly number[] | null;
}

export interface AggregationPlan {
  readonly spec: AggregationSpec[];
  readonly nodes: readonly PlanNode[];
}

/** Bind parsed `_aggs` (@tessera/search-model `parseAggregations`) to the schema (400 `invalid_aggregation` on a field that cannot take it). */
export function planAggregations(requests: readonly AggregationRequest[], schema: Schema): AggregationPlan {
  return { spec: requests.map((r) => r.spec), nodes: requests.map((r) => bind(r, schema)) };
}

function bind(request: AggregationRequest, schema: Schema): PlanNode {
  const where = `'${request.spec.name}' (${request.type})`;
  if (request.type === '_filter') return { kind: 'filter', tests: filterTests(request, schema), subs: request.aggs.map((a) => bind(a, schema)) };
  const field = boundField(schema, request.field!);
  const numeric = field !== null && !field.strings && field.type !== 'boolean';
  if (isMetricType(request.type)) {
    if (request.type !== '_count' && field !== null && !numeric) throw needsNumbers(where, request.field!, field.type);
    return { kind: 'metric', type: request.type, field };
  }
  const subs = request.aggs.map((a) => bind(a, schema));
  switch (request.type) {
    case '_histogram':
      if (field !== null && !numeric) throw needsNumbers(where, request.field!, field.type);
      if (field === null) return { kind: 'no-buckets' };
      return { kind: 'numbers', field, format: keyFormat(field.type), histogram: { interval: request.interval!, shift: request.shift! }, subs };
    case '_range':
      if (field !== null && !numeric) throw needsNumbers(where, request.field!, field.type);
      return rangePlan(request.ranges!, field, where, subs);
    default:
      if (field === null) return { kind: 'no-buckets' };
      if (field.strings) {
        // Geo keys are the values' canonical EWKT, as stored in the slot (API.md §10 Tessera specifics).
        const keys = request.type === '_values' || field.type === 'geo' ? 'values' : field.type === 'text' ? 'text' : 'lower';
        const spec = fieldSpec(schema, request.field!)!;
        if (keys === 'lower' && spec.boolTerm) return { kind: 'strings', field, keys: 'values', analyzer: null, subs };
        const analyzer = keys === 'text'
          ? analyzerFor({ language: spec.stemLanguage ?? spec.language, stemStrategy: spec.stemStrategy, stopStrategy: spec.stopStrategy })
          : null;
        return { kind: 'strings', field, keys, analyzer, subs };
      }
      return { kind: 'numbers', field, format: keyFormat(field.type), histogram: null, subs };
  }
}

function needsNumbers(where: string, field: string, type: string): Error {
  return aggregationErrors.invalid(`${where} needs a numeric or date field; '${field}' is ${type}`);
}

function boundField(schema: Schema, path: string): BoundField | null {
  const spec: FieldSpec | undefined = fieldSpec(schema, path);
  if (spec === undefined || !spec.index.fieldValues) return null;
  return { slot: spec.slot, strings: spec.type === 'text' || spec.type === 'keyword' || spec.type === 'geo' || spec.type === 'uuid', type: spec.type };
}

/**
 * Keys of numeric fields (API.md §10.2): integers as `"15"`, floats with a
 * fraction (`"1000.0"`), booleans `"true"`/`"false"`, dates ISO 8601 (the
 * stored form). An integer field's histogram with a fractional interval or
 * shift has fractional keys: those are written as floats.
 */
export function keyFormat(type: ScalarType): KeyFormat {
  if (type === 'boolean') return (v) => (v !== 0 ? 'true' : 'false');
  if (isDateType(type)) return formatDate;
  if (type === 'integer' || type === 'positive') {
    return (v) => (Number.isInteger(v) ? String(v === 0 ? 0 : v) : formatFloat(v));
  }
  return formatFloat;
}

/** A double with a fraction always shown: 1000 → "1000.0", 221.46 → "221.46", 1e21 → "1e+21". */
export function formatFloat(v: number): string {
  if (v === 0) return '0.0';
  const s = String(v);
  return Number.isInteger(v) && !s.includes('e') ? `${s}.0` : s;
}

function rangePlan(ranges: readonly RangeRequest[], field: BoundField | null, where: string, subs: readonly PlanNode[]): PlanNode {
  const from = new Float64Array(ranges.length);
  const to = new Float64Array(ranges.length);
  const format = field === null ? formatFloat : keyFormat(field.type);
  const keys = ranges.map((range, i) => {
    from[i] = range.from === undefined ? -Infinity : bound(range.from, field, '_from', where);
    to[i] = range.to === undefined ? Infinity : bound(range.to, field, '_to', where);
    if (range.key !== undefined) return range.key;
    const end = (given: number | string | undefined, value: number): string =>
      given === undefined ? '' : Number.isNaN(value) ? String(given) : format(value);
    return `${end(range.from, from[i]!)}..${end(range.to, to[i]!)}`;
  });
  return { kind: 'range', field, from, to, keys, subs };
}

/** A range bound as the column holds it (dates: epoch seconds); NaN for a bound of an unknown field that is not a number. */
function bound(value: number | string, field: BoundField | null, option: string, where: string): number {
  if (field === null) return typeof value === 'number' ? value : Number.NaN;
  const type: ScalarType = isNumericType(field.type) ? 'floating' : field.type;
  try {
    return Number(convertValue(type, value, option).index);
  } catch (err) {
    throw aggregationErrors.invalid(`'${option}' of a range of ${where}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** `_term` values converted for each field; unknown fields and unconvertible values match nothing (as in queries). */
function filterTests(request: AggregationRequest, schema: Schema): FilterTest[] {
  const tests: FilterTest[] = [];
  for (const { field: path, values } of request.terms!) {
    const field = boundField(schema, path);
    if (field === null) continue;
    const converted: Array<string | number> = [];
    for (const value of values) {
      try {
        const index = convertValue(field.type, value, path).index;
        converted.push(typeof index === 'boolean' ? (index ? 1 : 0) : field.strings ? String(field.type === 'geo' ? index : value) : index);
      } catch {
        // An unconvertible value (a word for a number field) equals no value.
      }
    }
    if (converted.length === 0) continue;
    tests.push(field.strings
      ? { slot: field.slot, strings: converted as string[], numbers: null }
      : { slot: field.slot, strings: null, numbers: converted as number[] });
  }
  return tests;
}
