/**
 * The reserved `_` keys a document or `_schema` body may hold (API.md §5.7,
 * §8.2): field options, value keys of typed values, and root control keys.
 * Any other `_` key is a 400. Same lists as the coordinator's stored-form.ts.
 */

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

/** Value keys this package understands: a date given as components (API.md §8.5). */
export const DATE_VALUE_KEYS: ReadonlySet<string> = new Set(['_datetime', '_date']);

/** Keys of a write body's root that are not fields (taken out before folding). */
export const ROOT_CONTROL_KEYS: ReadonlySet<string> = new Set(['_id', '_version', '_script', '_schema', '_settings']);

/** `''` and `#…` keys are comments: ignored everywhere, never stored. */
export function isCommentKey(key: string): boolean {
  return key.length === 0 || key.charCodeAt(0) === 0x23;
}

export { isPlainObject } from '@tessera/documents';

export function hasOwn(obj: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key);
}
