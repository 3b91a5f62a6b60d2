/**
 * Dates (API.md §8.5): parsing every accepted form to epoch seconds (UTC,
 * fractional, rounded to microseconds), date math, calendar bucket starts for
 * accuracy terms, and the stored form (UTC ISO 8601, no zone, fraction
 * trimmed). Calendar arithmetic uses Howard Hinnant's days-from-civil
 * algorithms on plain numbers rather than `Date`, whose `Date.UTC` maps years
 * 0–99 to 1900–1999.
 */
import { schemaErrors } from './errors.js';
import { hasOwn, isPlainObject } from './keys.js';
import type { DateUnit } from './types.js';

/** Years accepted: the four-digit ISO 8601 range, so the stored form never needs an expanded year. */
export const YEAR_MIN = 0;
export const YEAR_MAX = 9999;

const SECONDS_PER_DAY = 86400;
/** Fractions are kept to microseconds: doubles hold microsecond epoch values exactly up to year ~2255. */
const MICROS = 1e6;

export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

export function civilFromDays(days: number): [year: number, month: number, day: number] {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (month <= 2 ? 1 : 0), month, day];
}

function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

function daysInMonth(y: number, m: number): number {
  return m === 2 ? (isLeap(y) ? 29 : 28) : [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]!;
}

/** Broken-down UTC time; `sec` may carry a fraction. */
interface Civil {
  year: number;
  month: number;
  day: number;
  hour: number;
  min: number;
  sec: number;
}

function validCivil(c: Civil): boolean {
  return Number.isInteger(c.year) && c.year >= YEAR_MIN && c.year <= YEAR_MAX
    && Number.isInteger(c.month) && c.month >= 1 && c.month <= 12
    && Number.isInteger(c.day) && c.day >= 1 && c.day <= daysInMonth(c.year, c.month)
    && Number.isInteger(c.hour) && c.hour >= 0 && c.hour <= 23
    && Number.isInteger(c.min) && c.min >= 0 && c.min <= 59
    && c.sec >= 0 && c.sec < 60;
}

function civilToEpoch(c: Civil): number {
  return daysFromCivil(c.year, c.month, c.day) * SECONDS_PER_DAY + c.hour * 3600 + c.min * 60 + c.sec;
}

function epochToCivil(seconds: number): Civil {
  // Split on whole seconds first: dividing a tiny negative fraction by 86400 underflows to -0 and lands on the wrong day.
  const whole = Math.floor(seconds);
  const days = Math.floor(whole / SECONDS_PER_DAY);
  const rest = whole - days * SECONDS_PER_DAY;
  const [year, month, day] = civilFromDays(days);
  const hour = Math.floor(rest / 3600);
  const min = Math.floor((rest - hour * 3600) / 60);
  return { year, month, day, hour, min, sec: rest - hour * 3600 - min * 60 + (seconds - whole) };
}

const EPOCH_MIN = daysFromCivil(YEAR_MIN, 1, 1) * SECONDS_PER_DAY;
const EPOCH_END = daysFromCivil(YEAR_MAX + 1, 1, 1) * SECONDS_PER_DAY;

/**
 * `seconds` as whole seconds and microseconds (0–999,999), to the nearest
 * microsecond. The fraction is split off before it is scaled (exact for a
 * double): `seconds * 1e6` rounds once more, and beyond ±2^32 s (before 1834,
 * after 2106) that moved a stored microsecond each time the value was read
 * back and written again.
 */
function splitMicros(seconds: number): [whole: number, micros: number] {
  const floor = Math.floor(seconds);
  const micros = Math.round((seconds - floor) * MICROS);
  return micros === MICROS ? [floor + 1, 0] : [floor, micros];
}

function roundMicros(seconds: number): number {
  const [whole, micros] = splitMicros(seconds);
  return whole + micros / MICROS || 0; // no -0: its stored form reads back as 0
}

// `YYYY-MM-DD` or `YYYY/MM/DD`, then optionally `T`/space, `hh:mm[:ss[.f]]` and a zone.
const DATE_RE = /^(\d{4})([-/])(\d{2})\2(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?)?$/;

/** Epoch seconds of a date string without date math; undefined when it is not one. */
function parseDateString(s: string): number | undefined {
  const m = DATE_RE.exec(s);
  if (m === null) return undefined;
  const frac = m[8] === undefined ? 0 : Number(`0.${m[8]}`);
  const c: Civil = {
    year: Number(m[1]), month: Number(m[3]), day: Number(m[4]),
    hour: m[5] === undefined ? 0 : Number(m[5]), min: m[6] === undefined ? 0 : Number(m[6]),
    sec: (m[7] === undefined ? 0 : Number(m[7])) + frac,
  };
  if (!validCivil(c)) return undefined;
  let offset = 0;
  const zone = m[9];
  if (zone !== undefined && zone !== 'Z' && zone !== 'z') {
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2)) : 0;
    if (oh > 23 || om > 59) return undefined;
    offset = (zone[0] === '-' ? -1 : 1) * (oh * 3600 + om * 60);
  }
  return civilToEpoch(c) - offset;
}

/** `YYYY-MM-DD` and a real calendar day: the `date` detector of API.md §8.1. */
export function isDateOnlyString(s: string): boolean {
  return s.length === 10 && s.charCodeAt(4) === 0x2d && parseDateString(s) !== undefined;
}

/**
 * Any date string of §8.5 without date math (ISO 8601, `YYYY/MM/DD …`): the
 * `datetime` detector, which follows the `date` one and so also takes
 * `YYYY-MM-DD` when date detection is off.
 */
export function isDateString(s: string): boolean {
  return parseDateString(s) !== undefined;
}

const MATH_OP_RE = /([+-])(\d+)([yMwdhms])|\/([yMwdhms])/y;
const UNIT_SECONDS: Readonly<Record<string, number>> = { w: 604800, d: 86400, h: 3600, m: 60, s: 1 };

/** Apply date-math operations (`+1d-2h/M`) to an anchor; undefined when the text is not valid math. */
function applyDateMath(anchor: number, ops: string): number | undefined {
  let t = anchor;
  MATH_OP_RE.lastIndex = 0;
  while (MATH_OP_RE.lastIndex < ops.length) {
    const m = MATH_OP_RE.exec(ops);
    if (m === null) return undefined;
    if (m[4] !== undefined) {
      t = roundDown(t, m[4]);
      continue;
    }
    const n = (m[1] === '-' ? -1 : 1) * Number(m[2]);
    const unit = m[3]!;
    if (unit === 'y' || unit === 'M') {
      const c = epochToCivil(t);
      const months = c.year * 12 + (c.month - 1) + (unit === 'y' ? n * 12 : n);
      c.year = Math.floor(months / 12);
      c.month = months - c.year * 12 + 1;
      // Calendar arithmetic clamps to the month's end (Jan 31 + 1M = Feb 28), as Elasticsearch and Xapiand do.
      c.day = Math.min(c.day, daysInMonth(c.year, c.month));
      t = civilToEpoch(c);
    } else {
      t += n * UNIT_SECONDS[unit]!;
    }
  }
  return t;
}

function roundDown(t: number, unit: string): number {
  switch (unit) {
    case 'y': return dateUnitStart(t, 'year');
    case 'M': return dateUnitStart(t, 'month');
    case 'w': {
      const days = Math.floor(Math.floor(t) / SECONDS_PER_DAY);
      const weekday = ((days % 7) + 10) % 7; // 0 = Monday; 1970-01-01 was a Thursday
      return (days - weekday) * SECONDS_PER_DAY;
    }
    case 'd': return dateUnitStart(t, 'day');
    case 'h': return dateUnitStart(t, 'hour');
    case 'm': return dateUnitStart(t, 'minute');
    default: return dateUnitStart(t, 'second');
  }
}

/** Start (epoch seconds) of the calendar unit holding `t`: the bucket of a date accuracy term. */
export function dateUnitStart(t: number, unit: DateUnit): number {
  switch (unit) {
    case 'second': return Math.floor(t);
    case 'minute': return Math.floor(Math.floor(t) / 60) * 60;
    case 'hour': return Math.floor(Math.floor(t) / 3600) * 3600;
    case 'day': return Math.floor(Math.floor(t) / SECONDS_PER_DAY) * SECONDS_PER_DAY;
    default: {
      const c = epochToCivil(t);
      const span = unit === 'decade' ? 10 : unit === 'century' ? 100 : unit === 'millennium' ? 1000 : 1;
      const year = unit === 'month' ? c.year : Math.floor(c.year / span) * span;
      return daysFromCivil(year, unit === 'month' ? c.month : 1, 1) * SECONDS_PER_DAY;
    }
  }
}

const COMPONENT_KEYS: ReadonlySet<string> = new Set(['_year', '_month', '_day', '_hour', '_min', '_sec', '_fsec']);

function describe(value: unknown): string {
  try {
    return typeof value === 'string' ? `'${value}'` : String(JSON.stringify(value));
  } catch {
    return String(value);
  }
}

export interface DateParseOptions {
  /** Epoch seconds of `now` in date math; the clock when absent. */
  now?: number;
}

/**
 * Epoch seconds (UTC, fraction rounded to microseconds) of a date in any form
 * of API.md §8.5; 400 `invalid_date` naming the value otherwise.
 */
export function parseDate(value: unknown, options: DateParseOptions = {}): number {
  const t = parseAny(value, options);
  if (t === undefined || !Number.isFinite(t) || t < EPOCH_MIN || t >= EPOCH_END) {
    throw schemaErrors.invalidDate(describe(value));
  }
  return roundMicros(t);
}

function parseAny(value: unknown, options: DateParseOptions): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return parseDateText(value, options);
  if (!isPlainObject(value)) return undefined;
  const keys = Object.keys(value);
  if (keys.length === 1 && (keys[0] === '_datetime' || keys[0] === '_date')) {
    const inner = value[keys[0]];
    return isPlainObject(inner) ? parseComponents(inner) : parseAny(inner, options);
  }
  return undefined;
}

function parseDateText(s: string, options: DateParseOptions): number | undefined {
  if (s.startsWith('now')) return applyDateMath(options.now ?? Date.now() / 1000, s.slice(3));
  const bars = s.indexOf('||');
  if (bars < 0) return parseDateString(s);
  const anchor = parseDateString(s.slice(0, bars));
  return anchor === undefined ? undefined : applyDateMath(anchor, s.slice(bars + 2));
}

function parseComponents(o: Record<string, unknown>): number | undefined {
  for (const key of Object.keys(o)) if (!COMPONENT_KEYS.has(key)) return undefined;
  if (!hasOwn(o, '_year')) return undefined;
  const part = (key: string, dflt: number): number => (o[key] === undefined ? dflt : typeof o[key] === 'number' ? o[key] : NaN);
  const fsec = part('_fsec', 0);
  const c: Civil = {
    year: part('_year', 0), month: part('_month', 1), day: part('_day', 1),
    hour: part('_hour', 0), min: part('_min', 0), sec: part('_sec', 0),
  };
  if (!Number.isInteger(c.sec) || !(fsec >= 0 && fsec < 1)) return undefined;
  c.sec += fsec;
  return validCivil(c) ? civilToEpoch(c) : undefined;
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** Stored form of a date (API.md §5.7): `2015-01-01T00:00:00.001`, UTC, no zone, fraction trimmed. */
export function formatDate(seconds: number): string {
  const [whole, frac] = splitMicros(seconds);
  const c = epochToCivil(whole);
  const base = `${pad(c.year, 4)}-${pad(c.month, 2)}-${pad(c.day, 2)}T${pad(c.hour, 2)}:${pad(c.min, 2)}:${pad(c.sec, 2)}`;
  return frac === 0 ? base : `${base}.${pad(frac, 6).replace(/0+$/, '')}`;
}
