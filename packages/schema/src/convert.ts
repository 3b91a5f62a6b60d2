/**
 * Conversion of a value into a typed field (API.md §8.1 "A typed field
 * converts later values"): the value to index (numbers as numbers, dates as
 * epoch seconds, text and keyword as strings, booleans) and the value to
 * store (as sent, except dates in their stored form). Impossible → 400
 * "Type mismatch '<type>' -> '<detected>'" or a conversion error.
 */
import { formatDate, parseDate } from './dates.js';
import { describeType } from './detect.js';
import { schemaErrors } from './errors.js';
import { convertGeo } from './geo.js';
import { DATE_VALUE_KEYS, FIELD_OPTION_KEYS, isPlainObject } from './keys.js';
import {
  formatTime, formatTimedelta, parseTimedeltaString, parseTimeString, SECONDS_PER_DAY, TIMEDELTA_SECONDS_MAX,
} from './times.js';
import type { ScalarType } from './types.js';
import { canonicalUuid } from './uuid.js';

/** API.md §13: a keyword value longer than this many UTF-8 bytes is a 400 "Keyword too long". */
export const KEYWORD_BYTES_MAX = 245;

export type IndexValue = number | string | boolean;

export interface Converted {
  readonly index: IndexValue;
  readonly stored: unknown;
}

const INTEGER_RE = /^[+-]?\d+$/;
const FLOAT_RE = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const BOOLEAN_STRINGS: ReadonlyMap<string, boolean> = new Map([
  ['true', true], ['t', true], ['1', true], ['false', false], ['f', false], ['0', false],
]);

export interface ConvertOptions {
  /** Epoch seconds of `now` in date math; the clock when absent. */
  now?: number;
}

/** Convert one (non-null, non-array) value for a field of type `type` at `path`. */
export function convertValue(type: ScalarType, value: unknown, path: string, options: ConvertOptions = {}): Converted {
  const mismatch = () => schemaErrors.typeMismatch(type, describeType(value));
  switch (type) {
    case 'text':
    case 'keyword': {
      let s: string;
      if (typeof value === 'string') s = value;
      else if (typeof value === 'number' && Number.isFinite(value)) s = String(value);
      else if (typeof value === 'boolean' || typeof value === 'bigint') s = String(value);
      else throw mismatch();
      if (type === 'keyword' && Buffer.byteLength(s, 'utf8') > KEYWORD_BYTES_MAX) throw schemaErrors.keywordTooLong();
      return { index: s, stored: value };
    }
    case 'integer':
    case 'positive': {
      let n: number;
      if (typeof value === 'number') {
        if (!Number.isInteger(value)) throw Number.isFinite(value) ? mismatch() : schemaErrors.invalidValue(path, type, 'not finite');
        n = value;
      } else if (typeof value === 'bigint') {
        n = Number(value);
      } else if (typeof value === 'string' && INTEGER_RE.test(value)) {
        n = Number(value);
      } else {
        throw mismatch();
      }
      if (!Number.isSafeInteger(n)) throw schemaErrors.invalidValue(path, type, `${String(value)} is out of range`);
      if (type === 'positive' && n < 0) throw schemaErrors.invalidValue(path, type, `${String(value)} is negative`);
      return { index: n === 0 ? 0 : n, stored: value };
    }
    case 'floating': {
      let n: number;
      if (typeof value === 'number') n = value;
      else if (typeof value === 'bigint') n = Number(value);
      else if (typeof value === 'string' && FLOAT_RE.test(value)) n = Number(value);
      else throw mismatch();
      if (!Number.isFinite(n)) throw schemaErrors.invalidValue(path, type, `${String(value)} is not finite`);
      return { index: n === 0 ? 0 : n, stored: value };
    }
    case 'boolean': {
      if (typeof value === 'boolean') return { index: value, stored: value };
      const b = typeof value === 'string' ? BOOLEAN_STRINGS.get(value.toLowerCase()) : undefined;
      if (b === undefined) throw mismatch();
      return { index: b, stored: value };
    }
    case 'date':
    case 'datetime': {
      const isDateObject = isPlainObject(value) && Object.keys(value).some((k) => DATE_VALUE_KEYS.has(k));
      if (typeof value !== 'string' && typeof value !== 'number' && !isDateObject) throw mismatch();
      const seconds = parseDate(value, options);
      return { index: seconds, stored: formatDate(seconds) };
    }
    case 'time': {
      let seconds: number | undefined;
      if (typeof value === 'string') seconds = parseTimeString(value);
      else if (typeof value === 'number') {
        // Rounded first: 86399.9999999 would be stored as 24:00:00, which is not a time.
        const rounded = Math.round(value * 1e6) / 1e6;
        seconds = rounded >= 0 && rounded < SECONDS_PER_DAY ? rounded : undefined;
      }
      else throw mismatch();
      if (seconds === undefined) throw schemaErrors.invalidValue(path, type, `${JSON.stringify(value)} is not HH:MM[:SS[.f]][±HH:MM] or seconds in [0, 86400)`);
      return { index: seconds === 0 ? 0 : seconds, stored: formatTime(seconds) };
    }
    case 'timedelta': {
      let seconds: number | undefined;
      if (typeof value === 'string') seconds = parseTimedeltaString(value);
      else if (typeof value === 'number') seconds = Math.abs(value) <= TIMEDELTA_SECONDS_MAX ? Math.round(value * 1e6) / 1e6 : undefined;
      else throw mismatch();
      if (seconds === undefined) throw schemaErrors.invalidValue(path, type, `${JSON.stringify(value)} is not [±]HH:MM[:SS[.f]] or seconds, at most ${TIMEDELTA_SECONDS_MAX} either way`);
      return { index: seconds === 0 ? 0 : seconds, stored: formatTimedelta(seconds) };
    }
    case 'uuid': {
      if (typeof value !== 'string') throw mismatch();
      const uuid = canonicalUuid(value);
      if (uuid === undefined) throw schemaErrors.invalidValue(path, type, `${JSON.stringify(value)} is not a UUID`);
      return { index: uuid, stored: uuid };
    }
    case 'geo':
      return convertGeo(value, path, mismatch);
    case 'script': {
      const body = scriptText(value);
      if (body === undefined) throw mismatch();
      return { index: body, stored: isPlainObject(value) ? withoutOptions(value) : value };
    }
  }
}

/** Keys of a script object (API.md §11.2) whose string is what a `script` field indexes as text, first found wins. */
const SCRIPT_TEXT_KEYS = ['_lua', '_chai', '_body', '_value', '_name'] as const;

/** The text a `script` value is indexed by: its body (or its name); undefined when it is not a script. */
function scriptText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (!isPlainObject(value)) return undefined;
  for (const key of SCRIPT_TEXT_KEYS) {
    const v = value[key];
    if (typeof v === 'string') return v;
    if (isPlainObject(v)) {
      const inner = scriptText(v);
      if (inner !== undefined) return inner;
    }
  }
  return undefined;
}

/** A script object as stored: its own `_type` and other option keys are schema, not content. */
function withoutOptions(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!FIELD_OPTION_KEYS.has(k) && k.length > 0 && k[0] !== '#') out[k] = v;
  return out;
}
