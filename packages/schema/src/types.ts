/**
 * Field types, indexing modes and accuracies of this scope (API.md §8.1,
 * §8.2, INTERFACE "Indexing mode" and "Accuracy"). Types are kept in the
 * schema by their output name (`floating`, `array/integer`); everything here
 * parses user spellings (aliases, `integer/array`, comma pairs of `_index`)
 * into one normalised form.
 */
import { schemaErrors } from './errors.js';

/** Types that hold a value and have a type char. */
export type ScalarType =
  | 'text' | 'keyword' | 'integer' | 'positive' | 'floating' | 'boolean' | 'date' | 'datetime'
  | 'time' | 'timedelta' | 'uuid' | 'script' | 'geo';
export type BaseType = ScalarType | 'object';

/** A parsed `_type`: the concrete type and whether it was declared or detected as an array. */
export interface FieldType {
  readonly base: BaseType;
  readonly array: boolean;
}

/** Type chars of API.md §5.8, used in term names and as the seed of slot hashes. */
export const TYPE_CHARS: Readonly<Record<ScalarType, string>> = {
  text: 'S', keyword: 'K', integer: 'N', positive: 'N', floating: 'N', boolean: 'B', date: 'D', datetime: 'D',
  time: 'T', timedelta: 'T', uuid: 'U', script: 'S', geo: 'G',
};

const TYPE_ALIASES: ReadonlyMap<string, BaseType> = new Map<string, BaseType>([
  ['text', 'text'], ['string', 'text'], ['keyword', 'keyword'], ['term', 'keyword'], ['integer', 'integer'],
  ['positive', 'positive'], ['float', 'floating'], ['floating', 'floating'], ['boolean', 'boolean'],
  ['date', 'date'], ['datetime', 'datetime'], ['object', 'object'],
  ['time', 'time'], ['timedelta', 'timedelta'], ['uuid', 'uuid'], ['script', 'script'], ['geo', 'geo'], ['geospatial', 'geo'],
]);

/** Types of API.md §8.1 that later tasks add; naming one is a 400 "not supported yet", not "invalid". */
const LATER_TYPES: ReadonlySet<string> = new Set(['foreign']);

export function isNumericType(t: BaseType): t is 'integer' | 'positive' | 'floating' {
  return t === 'integer' || t === 'positive' || t === 'floating';
}

export function isDateType(t: BaseType): t is 'date' | 'datetime' {
  return t === 'date' || t === 'datetime';
}

/** `time` and `timedelta`: numbers of seconds, with accuracy units `second`, `minute`, `hour`. */
export function isTimeType(t: BaseType): t is 'time' | 'timedelta' {
  return t === 'time' || t === 'timedelta';
}

/** Parse a `_type` value (`"float"`, `"keyword/array"`, `"array/object"`); 400 when unknown. */
export function parseType(value: unknown, path: string): FieldType {
  if (typeof value !== 'string') throw schemaErrors.invalidType(path, String(value));
  let base: BaseType | undefined;
  let array = false;
  for (const part of value.toLowerCase().split('/')) {
    if (part === 'array' && !array) {
      array = true;
      continue;
    }
    const t = TYPE_ALIASES.get(part);
    if (t !== undefined && base === undefined) {
      base = t;
      continue;
    }
    if (LATER_TYPES.has(part)) throw schemaErrors.unsupportedType(path, value);
    throw schemaErrors.invalidType(path, value);
  }
  if (base === undefined) throw schemaErrors.invalidType(path, value);
  return { base, array };
}

/** Output name of a type (`floating`, `array/keyword`). */
export function typeName(t: FieldType): string {
  return t.array ? `array/${t.base}` : t.base;
}

/** The two dimensions of `_index`, each under the field's prefix and/or the global one. */
export interface IndexMode {
  readonly fieldTerms: boolean;
  readonly fieldValues: boolean;
  readonly globalTerms: boolean;
  readonly globalValues: boolean;
}

export const DEFAULT_INDEX: IndexMode = { fieldTerms: true, fieldValues: true, globalTerms: false, globalValues: false };

// Bits: 8 field terms, 4 field values, 2 global terms, 1 global values.
const INDEX_BITS: ReadonlyMap<string, number> = new Map([
  ['none', 0], ['field_terms', 8], ['field_values', 4], ['field_all', 12], ['field', 12],
  ['global_terms', 2], ['global_values', 1], ['global_all', 3], ['global', 3],
  ['terms', 10], ['values', 5], ['all', 15],
]);

/** Parse `_index` (`"field_terms"`, `"global"`, `"global_terms,field_values"`); undefined when invalid. */
export function parseIndex(value: unknown): IndexMode | undefined {
  if (typeof value !== 'string') return undefined;
  let bits = 0;
  for (const part of value.split(',')) {
    const b = INDEX_BITS.get(part.trim().toLowerCase());
    if (b === undefined) return undefined;
    bits |= b;
  }
  return { fieldTerms: (bits & 8) !== 0, fieldValues: (bits & 4) !== 0, globalTerms: (bits & 2) !== 0, globalValues: (bits & 1) !== 0 };
}

const FIELD_PART = ['', 'field_values', 'field_terms', 'field'];
const GLOBAL_PART = ['', 'global_values', 'global_terms', 'global'];

/**
 * Output name of an indexing mode: the interface table's name where there is
 * one (with `field`/`global` for the `_all` forms), else a comma pair.
 */
export function indexName(mode: IndexMode): string {
  const f = (mode.fieldTerms ? 2 : 0) + (mode.fieldValues ? 1 : 0);
  const g = (mode.globalTerms ? 2 : 0) + (mode.globalValues ? 1 : 0);
  if (f === 0 && g === 0) return 'none';
  if (f === g) return f === 3 ? 'all' : f === 2 ? 'terms' : 'values';
  if (g === 0) return FIELD_PART[f]!;
  if (f === 0) return GLOBAL_PART[g]!;
  return `${FIELD_PART[f]},${GLOBAL_PART[g]}`;
}

export const DATE_UNITS = ['second', 'minute', 'hour', 'day', 'month', 'year', 'decade', 'century', 'millennium'] as const;
export type DateUnit = (typeof DATE_UNITS)[number];

/**
 * Nominal length of each date unit in seconds (Xapiand's `UnitTime`: a month
 * of 30 days, a year of 365, so a month prefix is `<278d00>.` as Xapiand's
 * documentation shows). Used only to name accuracy prefixes (`<e10>.` = hour)
 * and to compare steps; buckets themselves start at calendar boundaries
 * (dates.ts).
 */
export const DATE_UNIT_SECONDS: Readonly<Record<DateUnit, number>> = {
  second: 1, minute: 60, hour: 3600, day: 86400, month: 2592000, year: 31536000,
  decade: 315360000, century: 3153600000, millennium: 31536000000,
};

export function isDateUnit(v: unknown): v is DateUnit {
  return typeof v === 'string' && (DATE_UNITS as readonly string[]).includes(v);
}

export const DEFAULT_NUMERIC_ACCURACY: readonly number[] = [100, 1000, 10000, 100000, 1000000, 100000000];
export const DEFAULT_DATE_ACCURACY: readonly DateUnit[] = ['hour', 'day', 'month', 'year', 'decade', 'century'];
/** Units a `time`/`timedelta` `_accuracy` may name (API.md §8.2), and its default (§8.1). */
export const TIME_UNITS: readonly DateUnit[] = ['second', 'minute', 'hour'];
export const DEFAULT_TIME_ACCURACY: readonly DateUnit[] = ['minute', 'hour'];
