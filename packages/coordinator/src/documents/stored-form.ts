/**
 * The stored form of a document body (API.md §5.7, §2.2): field-option
 * objects become their `_value`, option and comment keys are removed, fields
 * marked `_store: false` are dropped, typed values (`{"_point": …}`) keep the
 * form sent, and an unknown reserved key is a 400. Subtrees under
 * `_recurse: false` are kept verbatim (script and schema documents).
 */
import { apiErrors } from '../errors.js';

/** Schema options of API.md §8.2 and the detection flags of §8.1: removed from stored documents. */
export const FIELD_OPTION_KEYS: ReadonlySet<string> = new Set([
  '_type', '_index', '_accuracy', '_store', '_recurse', '_ignore', '_language', '_stem_language',
  '_stem_strategy', '_stop_strategy', '_positions', '_ngram', '_cjk_ngram', '_cjk_words', '_bool_term',
  '_weight', '_position', '_spelling', '_prefix', '_slot', '_partials', '_error', '_namespace',
  '_partial_paths', '_index_uuid_field', '_strict', '_dynamic', '_meta', '_script',
  '_uuid_detection', '_date_detection', '_datetime_detection', '_time_detection', '_timedelta_detection',
  '_numeric_detection', '_geo_detection', '_bool_detection', '_text_detection', '_accuracy_prefix',
]);

/** Keys that make an object a typed value (geo shapes, dates, casts, scripts): kept as sent. */
export const VALUE_KEYS: ReadonlySet<string> = new Set([
  '_point', '_circle', '_polygon', '_chull', '_convex', '_ewkt', '_multipoint', '_multicircle',
  '_multipolygon', '_multichull', '_multiconvex', '_geometrycollection', '_latitude', '_longitude',
  '_height', '_radius', '_datetime', '_date', '_time', '_timedelta', '_year', '_month', '_day',
  '_hour', '_min', '_sec', '_fsec', '_uuid', '_integer', '_positive', '_float', '_boolean', '_keyword',
  '_text', '_string', '_term', '_foreign', '_lua', '_chai', '_body', '_name', '_params',
]);

/** Keys taken out of a write body's root before normalising (not stored as fields). */
export const ROOT_CONTROL_KEYS: ReadonlySet<string> = new Set(['_id', '_version', '_script', '_schema', '_settings']);

type Json = unknown;

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !Buffer.isBuffer(v) && !(v instanceof Uint8Array);
}

/** Normalise a document body (its root control keys already removed). */
export function storedForm(body: Record<string, unknown>): Record<string, unknown> {
  if (body._recurse === false) return withoutKeys(body, FIELD_OPTION_KEYS);
  const out = normaliseObject(body, true);
  return isPlainObject(out) ? out : {};
}

const DROP = Symbol('drop');

function normaliseValue(value: Json): Json | typeof DROP {
  if (Array.isArray(value)) {
    const out: Json[] = [];
    for (const item of value) {
      const v = normaliseValue(item);
      if (v !== DROP) out.push(v);
    }
    return out;
  }
  if (isPlainObject(value)) return normaliseObject(value, false);
  return value;
}

function normaliseObject(obj: Record<string, unknown>, isRoot: boolean): Json | typeof DROP {
  if (obj._store === false) return DROP;
  if (obj._recurse === false) return withoutKeys(obj, FIELD_OPTION_KEYS);
  if (Object.prototype.hasOwnProperty.call(obj, '_value')) {
    for (const key of Object.keys(obj)) {
      if (key !== '_value' && key.startsWith('_') && !FIELD_OPTION_KEYS.has(key)) throw apiErrors.unknownReservedKey(key);
    }
    return normaliseValue(obj._value);
  }
  let typedValue = false;
  for (const key of Object.keys(obj)) if (VALUE_KEYS.has(key)) typedValue = true;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(obj)) {
    if (key.length === 0 || key.startsWith('#')) continue;
    if (key.startsWith('_')) {
      if (FIELD_OPTION_KEYS.has(key)) continue;
      if (VALUE_KEYS.has(key)) {
        out[key] = child; // a typed value keeps the form sent
        continue;
      }
      if (isRoot && ROOT_CONTROL_KEYS.has(key)) continue;
      throw apiErrors.unknownReservedKey(key);
    }
    if (typedValue) {
      out[key] = child;
      continue;
    }
    const v = normaliseValue(child);
    if (v !== DROP) out[key] = v;
  }
  return out;
}

function withoutKeys(obj: Record<string, unknown>, keys: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (!keys.has(k) && k.length > 0 && !k.startsWith('#')) out[k] = v;
  return out;
}
