/**
 * `_aggs` / `_aggregations` (API.md §10) → a validated aggregation tree,
 * independent of any shard or schema (the engine's collect/aggregation-plan.ts binds it to the schema):
 *
 *   { "<name>": { "<type>": { "_field": "<field>", …options },
 *                 "_aggs": { …sub-aggregations (bucket types only) } } }
 *
 * Every mistake is a 400 `invalid_aggregation` naming the aggregation:
 * names starting with `_`, unknown types, a missing or extra type, metrics
 * with sub-aggregations, nesting deeper than AGGREGATION_DEPTH_MAX, options
 * of the wrong type, `_sort` paths that name nothing (or go deeper than
 * `<sub>.<metric>`), and the Elasticsearch options Tessera leaves out
 * (`_missing`, `_include`, `_exclude`, percentiles, cardinality…). `_meta`
 * and `_value_type` are accepted and ignored. `_size` is read as `_limit`
 * (the Elasticsearch spelling).
 */
import { isPlainObject } from '@tessera/schema';
import { aggregationErrors } from './errors.js';
import type { AggregationSpec, AggregationType, BucketOrder, MetricType } from './partial.js';

/** API.md §13: aggregations nest at most this many levels (the top level is 1). */
export const AGGREGATION_DEPTH_MAX = 10;
/** API.md §10.2: buckets a multi-bucket aggregation returns unless `_limit` says otherwise. */
export const AGGREGATION_BUCKETS_DEFAULT_LIMIT = 10_000;
/** Aggregations in one request, all levels together: each costs work on every matching document. */
export const AGGREGATIONS_MAX = 1_000;
/** Ranges of one `_range`: each is checked against every value of every matching document. */
export const AGGREGATION_RANGES_MAX = 10_000;
/** Values listed by one `_filter`'s `_term`, all fields together. */
export const AGGREGATION_FILTER_VALUES_MAX = 10_000;
/** Default `_sigma` of `_std_deviation` and `_extended_stats` (API.md §10.1). */
export const DEFAULT_SIGMA = 2;

const TYPE_NAMES: ReadonlyMap<string, AggregationType> = new Map<string, AggregationType>([
  ['_count', '_count'], ['_sum', '_sum'], ['_avg', '_avg'], ['_min', '_min'], ['_max', '_max'],
  ['_median', '_median'], ['_mode', '_mode'], ['_variance', '_variance'],
  ['_std_deviation', '_std_deviation'], ['_std', '_std_deviation'], ['_stats', '_stats'], ['_extended_stats', '_extended_stats'],
  ['_values', '_values'], ['_value', '_values'], ['_terms', '_terms'], ['_term', '_terms'],
  ['_histogram', '_histogram'], ['_range', '_range'], ['_filter', '_filter'],
]);

/** Types of Xapiand or Elasticsearch that Tessera does not implement (a clearer 400 than "unknown"). */
const UNSUPPORTED_TYPES: ReadonlySet<string> = new Set([
  '_percentiles', '_percentile', '_percentile_ranks', '_cardinality', '_missing', '_date_histogram', '_date_range',
  '_geo_distance', '_geohash_grid', '_geotile_grid', '_geo_bounds', '_geo_centroid', '_geo_trixels', '_ip_range',
  '_top_hits', '_significant_terms', '_nested', '_global', '_filters',
]);

const METRIC_TYPES: ReadonlySet<AggregationType> = new Set<AggregationType>([
  '_count', '_sum', '_avg', '_min', '_max', '_median', '_mode', '_variance', '_std_deviation', '_stats', '_extended_stats',
]);

/** The values a metric outputs, by name (`<sub>.<metric>` sort paths must name one). */
export const METRIC_OUTPUTS: Readonly<Record<MetricType, readonly string[]>> = {
  _count: ['_count'],
  _sum: ['_sum'],
  _avg: ['_avg'],
  _min: ['_min'],
  _max: ['_max'],
  _median: ['_median'],
  _mode: ['_mode'],
  _variance: ['_variance'],
  _std_deviation: ['_std_deviation'],
  _stats: ['_count', '_min', '_max', '_avg', '_sum'],
  _extended_stats: ['_count', '_min', '_max', '_avg', '_sum', '_sum_of_squares', '_variance', '_std_deviation'],
};

const IGNORED_OPTIONS: ReadonlySet<string> = new Set(['_meta', '_value_type']);
const UNSUPPORTED_OPTIONS: ReadonlySet<string> = new Set(['_missing', '_include', '_exclude', '_script', '_format', '_order']);
const BUCKET_OPTIONS = ['_min_doc_count', '_limit', '_size', '_keyed', '_sort'] as const;
const OPTIONS: Readonly<Record<AggregationType, ReadonlySet<string>>> = (() => {
  const metric = new Set(['_field']);
  const withSigma = new Set(['_field', '_sigma']);
  const out = {} as Record<AggregationType, ReadonlySet<string>>;
  for (const t of METRIC_TYPES) out[t] = t === '_std_deviation' || t === '_extended_stats' ? withSigma : metric;
  out._values = new Set(['_field', ...BUCKET_OPTIONS]);
  out._terms = out._values;
  out._histogram = new Set(['_field', '_interval', '_shift', ...BUCKET_OPTIONS]);
  out._range = new Set(['_field', '_ranges', ...BUCKET_OPTIONS]);
  out._filter = new Set(['_term']);
  return out;
})();

export function isMetricType(type: AggregationType): type is MetricType {
  return METRIC_TYPES.has(type);
}

/** One listed range: bounds as given (numbers, or date strings; the engine's aggregation plan converts them for the field). */
export interface RangeRequest {
  readonly key?: string;
  readonly from?: number | string;
  readonly to?: number | string;
}

export interface AggregationRequest {
  /** The normalised form the coordinator renders from (its `aggs` are the children's specs). */
  readonly spec: AggregationSpec;
  readonly type: AggregationType;
  /** Every type but `_filter`. */
  readonly field?: string;
  readonly interval?: number;
  readonly shift?: number;
  readonly ranges?: readonly RangeRequest[];
  /** `_filter`: field → values, as listed. */
  readonly terms?: ReadonlyArray<{ readonly field: string; readonly values: ReadonlyArray<string | number | boolean> }>;
  readonly aggs: readonly AggregationRequest[];
}

/** Parse an `_aggs` value (400 `invalid_aggregation` when it is not valid). */
export function parseAggregations(raw: unknown): AggregationRequest[] {
  const budget = { nodes: 0 };
  return parseLevel(raw, 1, '_aggs', budget);
}

function parseLevel(raw: unknown, depth: number, where: string, budget: { nodes: number }): AggregationRequest[] {
  if (!isPlainObject(raw)) throw aggregationErrors.invalid(`'${where}' must be an object of named aggregations`);
  if (depth > AGGREGATION_DEPTH_MAX) throw aggregationErrors.invalid(`Aggregations nest at most ${AGGREGATION_DEPTH_MAX} levels`);
  const out: AggregationRequest[] = [];
  for (const [name, body] of Object.entries(raw)) {
    if (name.length === 0 || name.startsWith('_')) {
      throw aggregationErrors.invalid(`Invalid aggregation name '${name}': names must not be empty or start with '_'`);
    }
    if (++budget.nodes > AGGREGATIONS_MAX) throw aggregationErrors.invalid(`A request holds at most ${AGGREGATIONS_MAX} aggregations`);
    out.push(parseAggregation(name, body, depth, budget));
  }
  return out;
}

function parseAggregation(name: string, body: unknown, depth: number, budget: { nodes: number }): AggregationRequest {
  if (!isPlainObject(body)) throw aggregationErrors.invalid(`Aggregation '${name}' must be an object with one aggregation type`);
  let type: AggregationType | undefined;
  let options: Record<string, unknown> | undefined;
  let subs: unknown;
  for (const [key, value] of Object.entries(body)) {
    if (key === '_aggs' || key === '_aggregations') {
      if (subs !== undefined) throw aggregationErrors.invalid(`Aggregation '${name}' has both '_aggs' and '_aggregations'`);
      subs = value;
      continue;
    }
    if (IGNORED_OPTIONS.has(key)) continue;
    const known = TYPE_NAMES.get(key);
    if (known === undefined) {
      if (UNSUPPORTED_TYPES.has(key)) throw aggregationErrors.invalid(`Aggregation type '${key}' is not supported (aggregation '${name}')`);
      throw aggregationErrors.invalid(`Unknown aggregation type '${key}' in aggregation '${name}'`);
    }
    if (type !== undefined) throw aggregationErrors.invalid(`Aggregation '${name}' must have exactly one type, not '${type}' and '${key}'`);
    if (!isPlainObject(value)) throw aggregationErrors.invalid(`Options of '${name}' ('${key}') must be an object`);
    type = known;
    options = value;
  }
  if (type === undefined || options === undefined) throw aggregationErrors.invalid(`Aggregation '${name}' has no aggregation type`);
  const where = `'${name}' (${type})`;
  for (const key of Object.keys(options)) {
    if (IGNORED_OPTIONS.has(key) || OPTIONS[type].has(key)) continue;
    if (UNSUPPORTED_OPTIONS.has(key)) throw aggregationErrors.invalid(`Option '${key}' of ${where} is not supported`);
    throw aggregationErrors.invalid(`Unknown option '${key}' of ${where}`);
  }
  const metric = isMetricType(type);
  if (metric && subs !== undefined) throw aggregationErrors.invalid(`Metric aggregation ${where} cannot have sub-aggregations`);
  const aggs = subs === undefined ? [] : parseLevel(subs, depth + 1, `${name}._aggs`, budget);
  const spec: AggregationSpec = { name, type };
  const request: { -readonly [K in keyof AggregationRequest]: AggregationRequest[K] } = { spec, type, aggs };
  if (type !== '_filter') request.field = fieldOption(options._field, where);
  if (metric) {
    if (type === '_std_deviation' || type === '_extended_stats') {
      spec.sigma = numberOption(options._sigma, '_sigma', where, DEFAULT_SIGMA);
      if (spec.sigma < 0) throw aggregationErrors.invalid(`'_sigma' of ${where} must be a non-negative number`);
    }
    return request;
  }
  spec.aggs = aggs.map((a) => a.spec);
  switch (type) {
    case '_histogram': {
      if (options._interval === undefined) throw aggregationErrors.invalid(`${where} needs '_interval'`);
      const interval = numberOption(options._interval, '_interval', where, 0);
      if (!(interval > 0)) throw aggregationErrors.invalid(`'_interval' of ${where} must be a number > 0`);
      const shift = numberOption(options._shift, '_shift', where, 0);
      if (!(shift >= 0 && shift < interval)) throw aggregationErrors.invalid(`'_shift' of ${where} must be in [0, _interval)`);
      request.interval = interval;
      request.shift = shift;
      break;
    }
    case '_range':
      request.ranges = rangesOption(options._ranges, where);
      break;
    case '_filter':
      request.terms = termOption(options._term, where);
      return request;
    default:
      break;
  }
  const defaultOrder: BucketOrder = type === '_histogram'
    ? { by: '_key', desc: false }
    : type === '_range' ? { by: 'listed', desc: false } : { by: '_doc_count', desc: true };
  spec.order = options._sort === undefined ? defaultOrder : sortOption(options._sort, where, aggs);
  if (options._limit !== undefined && options._size !== undefined) throw aggregationErrors.invalid(`${where} has both '_limit' and '_size'`);
  spec.limit = unsignedOption(options._limit ?? options._size, options._limit !== undefined ? '_limit' : '_size', where, AGGREGATION_BUCKETS_DEFAULT_LIMIT);
  spec.minDocCount = unsignedOption(options._min_doc_count, '_min_doc_count', where, 1);
  if (options._keyed !== undefined && typeof options._keyed !== 'boolean') throw aggregationErrors.invalid(`'_keyed' of ${where} must be a boolean`);
  spec.keyed = options._keyed === true;
  return request;
}

function fieldOption(value: unknown, where: string): string {
  if (value === undefined) throw aggregationErrors.invalid(`${where} needs '_field'`);
  if (typeof value !== 'string' || value.length === 0) throw aggregationErrors.invalid(`'_field' of ${where} must be a field name`);
  return value;
}

function numberOption(value: unknown, option: string, where: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw aggregationErrors.invalid(`'${option}' of ${where} must be a number`);
  return value;
}

function unsignedOption(value: unknown, option: string, where: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw aggregationErrors.invalid(`'${option}' of ${where} must be an unsigned integer`);
  }
  return value;
}

function rangesOption(value: unknown, where: string): RangeRequest[] {
  if (value === undefined) throw aggregationErrors.invalid(`${where} needs '_ranges'`);
  if (!Array.isArray(value)) throw aggregationErrors.invalid(`'_ranges' of ${where} must be an array`);
  if (value.length > AGGREGATION_RANGES_MAX) throw aggregationErrors.invalid(`'_ranges' of ${where} lists more than ${AGGREGATION_RANGES_MAX} ranges`);
  return value.map((range: unknown) => {
    if (!isPlainObject(range)) throw aggregationErrors.invalid(`Each of '_ranges' of ${where} must be an object`);
    const out: { -readonly [K in keyof RangeRequest]: RangeRequest[K] } = {};
    for (const [key, v] of Object.entries(range)) {
      if (v === null || IGNORED_OPTIONS.has(key)) continue;
      if (key === '_key') {
        if (typeof v !== 'string') throw aggregationErrors.invalid(`'_key' of a range of ${where} must be a string`);
        out.key = v;
      } else if (key === '_from' || key === '_to') {
        if (!(typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)))) {
          throw aggregationErrors.invalid(`'${key}' of a range of ${where} must be a number or a date string`);
        }
        if (key === '_from') out.from = v;
        else out.to = v;
      } else {
        throw aggregationErrors.invalid(`Unknown option '${key}' in a range of ${where}`);
      }
    }
    return out;
  });
}

function termOption(value: unknown, where: string): Array<{ field: string; values: Array<string | number | boolean> }> {
  if (value === undefined) throw aggregationErrors.invalid(`${where} needs '_term': {"<field>": value or [values…]}`);
  if (!isPlainObject(value)) throw aggregationErrors.invalid(`'_term' of ${where} must be an object of field → value(s)`);
  let total = 0;
  return Object.entries(value).map(([field, v]) => {
    const values = Array.isArray(v) ? v : [v];
    for (const x of values) {
      if (typeof x !== 'string' && typeof x !== 'boolean' && !(typeof x === 'number' && Number.isFinite(x))) {
        throw aggregationErrors.invalid(`Values of '_term.${field}' of ${where} must be strings, numbers or booleans`);
      }
    }
    total += values.length;
    if (total > AGGREGATION_FILTER_VALUES_MAX) throw aggregationErrors.invalid(`'_term' of ${where} lists more than ${AGGREGATION_FILTER_VALUES_MAX} values`);
    return { field, values: values as Array<string | number | boolean> };
  });
}

/**
 * `_sort`: `{"<by>": "asc" | "desc" | {"_order": …}}` with `<by>` one of
 * `_doc_count`, `_key`, `<sub>`, `<sub>.<metric>`; a bare string sorts
 * ascending by it (as Xapiand reads it).
 */
function sortOption(value: unknown, where: string, aggs: readonly AggregationRequest[]): BucketOrder {
  let path: string;
  let direction: unknown = 'asc';
  if (typeof value === 'string') {
    path = value;
  } else if (isPlainObject(value)) {
    const entries = Object.entries(value);
    if (entries.length !== 1) throw aggregationErrors.invalid(`'_sort' of ${where} must name exactly one criterion`);
    [path, direction] = entries[0]!;
    if (isPlainObject(direction)) {
      for (const key of Object.keys(direction)) {
        if (key !== '_order') throw aggregationErrors.invalid(`Unknown option '${key}' in '_sort' of ${where}`);
      }
      direction = direction._order;
    }
  } else {
    throw aggregationErrors.invalid(`'_sort' of ${where} must be a string or an object`);
  }
  if (direction !== 'asc' && direction !== 'desc') throw aggregationErrors.invalid(`'_sort.${path}' of ${where} must be "asc" or "desc"`);
  const desc = direction === 'desc';
  if (path === '_doc_count' || path === '_key') return { by: path, desc };
  const parts = path.split('.');
  if (parts.length > 2) throw aggregationErrors.invalid(`'_sort' path '${path}' of ${where} is too deep: use '<sub>' or '<sub>.<metric>'`);
  const sub = aggs.findIndex((a) => a.spec.name === parts[0]);
  if (sub < 0) throw aggregationErrors.invalid(`'_sort' of ${where} names '${parts[0]}', which is not one of its sub-aggregations`);
  const target = aggs[sub]!;
  let metric = parts[1];
  if (target.type === '_filter') {
    if (metric !== undefined && metric !== '_doc_count') throw aggregationErrors.invalid(`'_sort' path '${path}' of ${where}: a '_filter' offers only '_doc_count'`);
    return { by: 'sub', desc, sub, metric: '_doc_count' };
  }
  if (!isMetricType(target.type)) throw aggregationErrors.invalid(`'_sort' of ${where} cannot order by multi-bucket aggregation '${parts[0]}'`);
  const outputs = METRIC_OUTPUTS[target.type];
  if (metric === undefined) {
    if (outputs.length !== 1) throw aggregationErrors.invalid(`'_sort' of ${where} must name a value of '${parts[0]}' (${target.type}), e.g. '${parts[0]}.${outputs[1]}'`);
    metric = outputs[0]!;
  }
  if (!outputs.includes(metric)) throw aggregationErrors.invalid(`'_sort' path '${path}' of ${where}: '${target.type}' has no '${metric}'`);
  return { by: 'sub', desc, sub, metric };
}

