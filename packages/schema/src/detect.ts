/**
 * Dynamic typing of a new field from its first value (API.md §8.1). The order
 * of string detectors is the contract; `STRING_DETECTORS` is the extension
 * point where later types (uuid before date; time, timedelta and geo after
 * datetime) slot in, each switched by its own inherited detection flag.
 */
import { isDateOnlyString, isDateString } from './dates.js';
import { DATE_VALUE_KEYS, hasOwn, isPlainObject, VALUE_KEYS } from './keys.js';
import { isCoordinateArray, isEwktString, isGeoObject } from './geo.js';
import { isTimedeltaString, isTimeString } from './times.js';
import { isUuidString } from './uuid.js';
import type { ScalarType } from './types.js';

/** The detection flags of API.md §8.1 (all default true, inherited). */
export interface DetectionFlags {
  readonly uuid: boolean;
  readonly date: boolean;
  readonly datetime: boolean;
  readonly time: boolean;
  readonly timedelta: boolean;
  readonly numeric: boolean;
  readonly geo: boolean;
  readonly bool: boolean;
  readonly text: boolean;
}

export const DEFAULT_DETECTION: DetectionFlags = {
  uuid: true, date: true, datetime: true, time: true, timedelta: true, numeric: true, geo: true, bool: true, text: true,
};

/** Option key of each flag (`_date_detection` → `date`). */
export const DETECTION_FLAG_OPTIONS: Readonly<Record<keyof DetectionFlags, string>> = {
  uuid: '_uuid_detection', date: '_date_detection', datetime: '_datetime_detection', time: '_time_detection',
  timedelta: '_timedelta_detection', numeric: '_numeric_detection', geo: '_geo_detection',
  bool: '_bool_detection', text: '_text_detection',
};

export interface StringDetector {
  readonly type: ScalarType;
  readonly flag: keyof DetectionFlags;
  readonly test: (s: string) => boolean;
}

/** String detection order of API.md §8.1 for the types of this scope; the first match wins. */
export const STRING_DETECTORS: readonly StringDetector[] = [
  { type: 'uuid', flag: 'uuid', test: isUuidString },
  { type: 'date', flag: 'date', test: isDateOnlyString },
  { type: 'datetime', flag: 'datetime', test: isDateString },
  { type: 'time', flag: 'time', test: isTimeString },
  { type: 'timedelta', flag: 'timedelta', test: isTimedeltaString },
  { type: 'geo', flag: 'geo', test: isEwktString },
  { type: 'boolean', flag: 'bool', test: (s) => s === 'true' || s === 'false' },
];

/**
 * What a value says about its type: a type name (`integer`, `array/text`,
 * `object`), `null` when it fixes nothing (null, empty or all-null array, a
 * typed value of a later type such as `{"_point": …}`), or `undetectable`
 * when a detection flag is off and nothing else matches.
 */
export type Detected = string | null | { readonly undetectable: string };

/** Dynamic type of a first value. */
export function detectType(value: unknown, flags: DetectionFlags = DEFAULT_DETECTION): Detected {
  if (Array.isArray(value)) {
    // `[lon, lat]` is one geo point; an array of them is array/geo (API.md §8.1).
    if (flags.geo && isCoordinateArray(value)) return 'geo';
    if (flags.geo && isCoordinateArray(value.find((v) => v !== null && v !== undefined))) return 'array/geo';
    const first = firstNonNull(value);
    if (first === undefined) return null;
    const inner = detectType(first, flags);
    if (typeof inner !== 'string') return inner;
    return inner.startsWith('array/') ? inner : `array/${inner}`;
  }
  return detectScalar(value, flags);
}

function detectScalar(value: unknown, flags: DetectionFlags): Detected {
  if (value === null || value === undefined) return null;
  if (typeof value === 'boolean') return flags.bool ? 'boolean' : { undetectable: 'boolean detection is off' };
  if (typeof value === 'number' || typeof value === 'bigint') {
    if (!flags.numeric) return { undetectable: 'numeric detection is off' };
    return typeof value === 'bigint' || Number.isInteger(value) ? 'integer' : 'floating';
  }
  if (typeof value === 'string') {
    for (const d of STRING_DETECTORS) if (flags[d.flag] && d.test(value)) return d.type;
    return flags.text ? 'text' : 'keyword';
  }
  if (isPlainObject(value)) {
    if (hasOwn(value, '_value')) return detectType(value._value, flags);
    for (const key of Object.keys(value)) {
      if (DATE_VALUE_KEYS.has(key)) return key === '_date' ? 'date' : 'datetime';
    }
    if (flags.geo && isGeoObject(value)) return 'geo';
    for (const key of Object.keys(value)) if (VALUE_KEYS.has(key)) return null;
    return 'object';
  }
  return null; // binary and other opaque values
}

function firstNonNull(list: readonly unknown[]): unknown {
  for (const item of list) {
    if (Array.isArray(item)) {
      const inner = firstNonNull(item);
      if (inner !== undefined) return inner;
    } else if (item !== null && item !== undefined) {
      return item;
    }
  }
  return undefined;
}

/** Name of a value's type for "Type mismatch" messages (detection with every flag on). */
export function describeType(value: unknown): string {
  const d = detectType(value);
  if (typeof d === 'string') return d;
  if (isPlainObject(value)) for (const key of Object.keys(value)) if (VALUE_KEYS.has(key)) return key.slice(1);
  return value === null ? 'null' : typeof value;
}
