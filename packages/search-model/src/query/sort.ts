/**
 * Sorting (API.md §9.5): `_sort` values and query-string `sort` parameters
 * into sort keys, most significant first. Relevance is the pseudo-field
 * `_score` (`_weight` is read as `_score`); `_id` sorts by document ID; any
 * other name starting with `_` is a 400. Metric names are normalised to
 * their first spelling in §9.5 (`leven` → `levenshtein`). Whether a field
 * exists (unknown → ignored) and geo without `_value` (400) are the Weight's
 * to check: both need the schema.
 */
import { isPlainObject } from '@tessera/schema';
import type { SortKey } from './ast.js';
import { queryErrors } from './errors.js';
import { splitFieldName } from './leaf.js';
import { QUERY_LIMITS, type QueryLimits } from './limits.js';

const METRICS: ReadonlyMap<string, string> = new Map([
  ['levenshtein', 'levenshtein'], ['leven', 'levenshtein'],
  ['jarowinkler', 'jarowinkler'], ['jarow', 'jarowinkler'],
  ['sorensendice', 'sorensendice'], ['sorensen', 'sorensendice'], ['dice', 'sorensendice'],
  ['jaccard', 'jaccard'],
  ['lcsubstr', 'lcsubstr'], ['lcs', 'lcsubstr'],
  ['lcsubsequence', 'lcsubsequence'], ['lcsq', 'lcsubsequence'],
  ['soundex', 'soundex'], ['sound', 'soundex'],
  ['jaro', 'jaro'],
]);

const SCORE = '_score';


function sortPath(name: string, limits: QueryLimits): string {
  if (name === SCORE || name === '_weight') return SCORE;
  const split = splitFieldName(name, limits);
  if (typeof split === 'string') throw queryErrors.invalidSort(`Invalid sort field: ${name.slice(0, 100)}`);
  return split.join('.');
}

function metricName(metric: unknown): string {
  const name = typeof metric === 'string' ? METRICS.get(metric.toLowerCase()) : undefined;
  if (name === undefined) throw queryErrors.invalidSort(`Unknown metric: ${String(metric).slice(0, 100)}`);
  return name;
}

/** `"f"`, `"+f"` ascending; `"-f"` descending. */
function fromString(s: string, limits: QueryLimits): { path: string; order: 'asc' | 'desc' } {
  const first = s.charCodeAt(0);
  if (first === 0x2d) return { path: sortPath(s.slice(1), limits), order: 'desc' };
  if (first === 0x2b) return { path: sortPath(s.slice(1), limits), order: 'asc' };
  return { path: sortPath(s, limits), order: 'asc' };
}

/**
 * `{"f": {options}}`; nested plain keys extend the path, as in the query DSL
 * (`{"name": {"first": {"_order": "desc"}}}` is `name.first`, which is also
 * what the HTTP layer makes of a dotted `{"name.first": {…}}`).
 */
function fromObjectEntry(name: string, spec: unknown, limits: QueryLimits, add: (k: SortKey) => void, depth = 1): void {
  const path = sortPath(name, limits);
  if (!isPlainObject(spec)) throw queryErrors.invalidSort(`Invalid sort for ${path}: expected an object`);
  const names = Object.keys(spec);
  if (path !== SCORE && names.length > 0 && names.every((k) => k.charCodeAt(0) !== 0x5f)) {
    if (depth >= limits.depthMax) throw queryErrors.tooComplex(`Sort nested deeper than ${limits.depthMax} levels`);
    for (const child of names) fromObjectEntry(`${path}.${child}`, spec[child], limits, add, depth + 1);
    return;
  }
  let order: 'asc' | 'desc' = 'asc';
  let value: unknown;
  let metric: string | undefined;
  for (const key of Object.keys(spec)) {
    const v = spec[key];
    switch (key) {
      case '_order':
        if (v !== 'asc' && v !== 'desc') throw queryErrors.invalidSort(`Invalid _order for ${path}: expected "asc" or "desc"`);
        order = v;
        break;
      case '_value':
        if (v === null || v === undefined || Array.isArray(v) && v.length === 0) throw queryErrors.invalidSort(`Invalid _value for ${path}`);
        value = v;
        break;
      case '_metric':
        metric = metricName(v);
        break;
      default:
        throw queryErrors.invalidSort(`Invalid sort option: ${key.slice(0, 100)}`);
    }
  }
  add(key(path, order, value, metric));
}

function key(path: string, order: 'asc' | 'desc', value: unknown, metric: string | undefined): SortKey {
  if (value === undefined) return metric === undefined ? { path, order } : { path, order, metric };
  return metric === undefined ? { path, order, value } : { path, order, value, metric };
}

/**
 * The direction of a key's values: a field's own order, but `_score`
 * ascending means best first (API.md §9.5: relevance is the natural
 * order), so its weights descend. What a merge of sort values must follow.
 */
export function valueOrder(key: SortKey): 'asc' | 'desc' {
  if (key.path !== SCORE) return key.order;
  return key.order === 'asc' ? 'desc' : 'asc';
}

/** A `_sort` body value (absent = relevance, `[]`). */
export function parseSort(value: unknown, limits: QueryLimits = QUERY_LIMITS): SortKey[] {
  const keys: SortKey[] = [];
  const add = (k: SortKey): void => {
    keys.push(k);
    if (keys.length > limits.sortKeysMax) throw queryErrors.invalidSort(`More than ${limits.sortKeysMax} sort keys`);
  };
  const one = (v: unknown): void => {
    if (typeof v === 'string') {
      add(fromString(v, limits));
    } else if (isPlainObject(v)) {
      const names = Object.keys(v);
      if (names.length === 0) throw queryErrors.invalidSort('Invalid _sort: empty object');
      for (const name of names) fromObjectEntry(name, v[name], limits, add);
    } else {
      throw queryErrors.invalidSort('Invalid _sort: expected a string, an object or an array of them');
    }
  };
  if (value === undefined || value === null) return keys;
  if (Array.isArray(value)) {
    if (value.length > limits.sortKeysMax) throw queryErrors.invalidSort(`More than ${limits.sortKeysMax} sort keys`);
    for (const v of value) one(v);
  } else {
    one(value);
  }
  return keys;
}

/**
 * Query-string `sort` parameters (`field`, `-field`, `+field`, `field:ref`
 * for a distance to `ref`), with the `metric` parameter applied to those
 * with a reference.
 */
export function parseSortStrings(sorts: readonly string[], metric?: string, limits: QueryLimits = QUERY_LIMITS): SortKey[] {
  if (sorts.length > limits.sortKeysMax) throw queryErrors.invalidSort(`More than ${limits.sortKeysMax} sort keys`);
  const metricCanonical = metric === undefined ? undefined : metricName(metric);
  return sorts.map((s) => {
    const colon = s.indexOf(':');
    if (colon < 0) {
      const { path, order } = fromString(s, limits);
      return { path, order };
    }
    const { path, order } = fromString(s.slice(0, colon), limits);
    return key(path, order, s.slice(colon + 1), metricCanonical);
  });
}
