/**
 * Validation and normalisation of field options (API.md §8.2). Each option
 * is checked on its own (`normaliseOption`), then against the field's type
 * once that is known (`checkOptionsForType`), whether the options come from a
 * `_schema` body or inline in a document.
 */
import { schemaErrors } from './errors.js';
import { GEO_ACCURACY_LEVEL_MAX } from './geo.js';
import { FIELD_OPTION_KEYS } from './keys.js';
import { normaliseLanguage } from './languages.js';
import {
  DATE_UNITS, type FieldType, indexName, isDateType, isDateUnit, isNumericType, isTimeType, parseIndex, parseType, TIME_UNITS,
  typeName,
} from './types.js';

/** Options that cannot change once a field exists (API.md §7.1). */
export const IMMUTABLE_OPTIONS: ReadonlySet<string> = new Set([
  '_type', '_prefix', '_slot', '_accuracy', '_language', '_stem_language', '_namespace', '_partial_paths',
  '_index_uuid_field',
]);

/** Detection flags (API.md §8.1), inherited by descendants. */
export const DETECTION_OPTIONS: readonly string[] = [
  '_uuid_detection', '_date_detection', '_datetime_detection', '_time_detection', '_timedelta_detection',
  '_numeric_detection', '_geo_detection', '_bool_detection', '_text_detection',
];

const BOOLEAN_OPTIONS: ReadonlySet<string> = new Set([
  '_store', '_recurse', '_positions', '_ngram', '_cjk_ngram', '_cjk_words', '_bool_term', '_spelling',
  '_partials', '_namespace', '_partial_paths', '_strict', '_dynamic', ...DETECTION_OPTIONS,
]);

const STEM_STRATEGIES: ReadonlyMap<string, string> = new Map([
  ['stem_none', 'stem_none'], ['none', 'stem_none'], ['stem_some', 'stem_some'], ['some', 'stem_some'],
  ['stem_all', 'stem_all'], ['all', 'stem_all'], ['stem_all_z', 'stem_all_z'], ['all_z', 'stem_all_z'],
]);

const STOP_STRATEGIES: ReadonlyMap<string, string> = new Map([
  ['stop_none', 'stop_none'], ['none', 'stop_none'], ['stop_all', 'stop_all'], ['all', 'stop_all'],
  ['stop_stemmed', 'stop_stemmed'], ['stemmed', 'stop_stemmed'],
]);

/** Slots 0–19 are reserved (0 `_id`, 1 `_version`, API.md §5.8); 0xffffffff is Xapian's "no slot". */
export const SLOT_MIN = 20;
export const SLOT_MAX = 0xfffffffe;

/** Where an option appears: a field of a `_schema` or a document, or the root. */
export type OptionPlace = 'field' | 'root';

/**
 * Normalised value of one option, `undefined` for an option that is accepted
 * and dropped (`_accuracy_prefix`, derived and only shown by GET). An unknown
 * `_` key is 400 `invalid_reserved_key`; a bad value 400 `invalid_field_option`.
 */
export function normaliseOption(key: string, value: unknown, path: string, place: OptionPlace): unknown {
  if (!FIELD_OPTION_KEYS.has(key)) throw schemaErrors.unknownReservedKey(key);
  const bad = (why: string) => schemaErrors.invalidOption(path || '_schema', key, why);
  if (BOOLEAN_OPTIONS.has(key)) {
    if (typeof value !== 'boolean') throw bad('expected a boolean');
    return value;
  }
  switch (key) {
    case '_type':
      return typeName(parseType(value, path || '_schema'));
    case '_index': {
      const mode = parseIndex(value);
      if (mode === undefined) throw bad(`unknown indexing mode ${JSON.stringify(value)}`);
      return indexName(mode);
    }
    case '_accuracy':
      return normaliseAccuracy(value, bad);
    case '_accuracy_prefix':
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw bad('expected an array of strings');
      return undefined;
    case '_language':
    case '_stem_language': {
      const name = typeof value === 'string' ? normaliseLanguage(value) : undefined;
      if (name === undefined) throw bad(`unknown language ${JSON.stringify(value)}`);
      return name;
    }
    case '_stem_strategy':
    case '_stop_strategy': {
      const table = key === '_stem_strategy' ? STEM_STRATEGIES : STOP_STRATEGIES;
      const v = typeof value === 'string' ? table.get(value.toLowerCase()) : undefined;
      if (v === undefined) throw bad(`expected one of ${[...new Set(table.values())].join(', ')}`);
      return v;
    }
    case '_weight':
    case '_position':
      if (isCount(value)) return value;
      throw bad('expected a non-negative integer');
    case '_ignore': {
      const list = typeof value === 'string' ? [value] : value;
      if (!Array.isArray(list) || !list.every((v) => typeof v === 'string')) throw bad('expected field names');
      return [...new Set(list as string[])];
    }
    case '_prefix':
      if (place === 'root') throw bad('not valid at the root');
      if (typeof value !== 'string' || value.length === 0) throw bad('expected a non-empty string');
      return value;
    case '_slot':
      if (place === 'root') throw bad('not valid at the root');
      if (typeof value !== 'number' || !Number.isInteger(value) || value < SLOT_MIN || value > SLOT_MAX) {
        throw bad(`expected an integer from ${SLOT_MIN} to ${SLOT_MAX}`);
      }
      return value;
    case '_error':
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw bad('expected a non-negative number');
      return value;
    case '_index_uuid_field':
      if (value !== 'uuid' && value !== 'uuid_field' && value !== 'both') throw bad('expected uuid, uuid_field or both');
      return value;
    case '_script':
      if (place !== 'root') throw bad('only valid at the root of a schema');
      if (typeof value !== 'string' && (value === null || typeof value !== 'object')) throw bad('expected a script');
      return value;
    case '_meta':
      return value;
    default:
      throw schemaErrors.unknownReservedKey(key);
  }
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

/** Sorted, deduplicated steps (positive integers; geo HTM levels from 0) or date units (in unit order). */
function normaliseAccuracy(value: unknown, bad: (why: string) => Error): unknown {
  if (!Array.isArray(value)) throw bad('expected an array');
  if (value.every((v) => typeof v === 'number')) {
    if (!value.every((v) => Number.isSafeInteger(v) && (v as number) >= 0)) throw bad('steps must be positive integers (geo: levels 0–25)');
    return [...new Set(value as number[])].sort((a, b) => a - b);
  }
  if (value.every(isDateUnit)) return DATE_UNITS.filter((u) => value.includes(u));
  throw bad(`expected positive steps or units among ${DATE_UNITS.join(', ')}`);
}

type Kind = 'text' | 'text_keyword' | 'keyword' | 'accuracy' | 'geo' | 'object' | 'scalar';

/** Options restricted to some types (the "For" column of API.md §8.2). */
const OPTION_KINDS: ReadonlyMap<string, Kind> = new Map<string, Kind>([
  ['_language', 'text'], ['_stem_language', 'text'], ['_stem_strategy', 'text'], ['_stop_strategy', 'text'],
  ['_positions', 'text'], ['_ngram', 'text'], ['_cjk_ngram', 'text'], ['_cjk_words', 'text'],
  ['_weight', 'text_keyword'], ['_position', 'text_keyword'], ['_spelling', 'text_keyword'],
  ['_bool_term', 'keyword'], ['_accuracy', 'accuracy'], ['_partials', 'geo'], ['_error', 'geo'],
  ['_ignore', 'object'], ['_namespace', 'object'], ['_partial_paths', 'object'], ['_index_uuid_field', 'object'],
  ['_dynamic', 'object'], ['_slot', 'scalar'],
]);

/** 400 when a (normalised) option does not apply to the field's type. */
export function checkOptionsForType(options: Record<string, unknown>, type: FieldType, path: string): void {
  const t = type.base;
  // A namespace is an object whose `_type` is its descendants' (§8.7): it takes object options and theirs.
  const namespace = options._namespace === true;
  for (const key of Object.keys(options)) {
    const kind = OPTION_KINDS.get(key);
    if (kind === undefined || (namespace && kind === 'object')) continue;
    const ok =
      kind === 'text' ? t === 'text'
      : kind === 'text_keyword' ? t === 'text' || t === 'keyword'
      : kind === 'keyword' ? t === 'keyword'
      : kind === 'accuracy' ? accuracyFits(options[key], t)
      : kind === 'object' ? t === 'object'
      : kind === 'scalar' ? t !== 'object'
      : t === 'geo'; // `_partials`, `_error`
    if (!ok) throw schemaErrors.optionNotForType(path, key, typeName(type));
  }
}

function accuracyFits(accuracy: unknown, t: FieldType['base']): boolean {
  if (!Array.isArray(accuracy)) return false;
  if (accuracy.length === 0) return isNumericType(t) || isDateType(t) || isTimeType(t) || t === 'geo';
  if (typeof accuracy[0] === 'number') {
    // Numeric steps are positive; geo accuracy names HTM levels 0–25 (normaliseAccuracy allowed 0 for them).
    if (t === 'geo') return (accuracy as number[]).every((level) => level <= GEO_ACCURACY_LEVEL_MAX);
    return isNumericType(t) && (accuracy as number[]).every((step) => step > 0);
  }
  return isDateType(t) || (isTimeType(t) && accuracy.every((u) => TIME_UNITS.includes(u as (typeof TIME_UNITS)[number])));
}
