/**
 * `time` and `timedelta` values (API.md §8.1, §8.5). A time is seconds after
 * midnight, from `HH:MM[:SS[.f]][±HH:MM|Z]` (an offset is subtracted and the
 * result wrapped into one day) or a number in [0, 86400). A timedelta is
 * signed seconds, from `[±]HH:MM[:SS[.f]]` (hours up to 2,000,000) or a
 * number, at most TIMEDELTA_SECONDS_MAX either way. Fractions are kept to microseconds, as dates are.
 *
 * Stored form (Tessera's choice; Xapiand keeps a string too): `HH:MM:SS[.f]`
 * for a time, `±HH:MM:SS[.f]` for a timedelta, fraction trimmed.
 */
export const SECONDS_PER_DAY = 86400;
const MICROS = 1e6;
/**
 * Largest timedelta magnitude, seconds (~228 years): microseconds of it still
 * fit a double's 53 bits, so the stored text parses back to the same value.
 */
export const TIMEDELTA_SECONDS_MAX = 7_200_000_000;

const TIME_RE = /^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:(Z)|([+-])(\d{2}):?(\d{2}))?$/;
const TIMEDELTA_RE = /^([+-])?(\d{1,9}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$/;

const micros = (seconds: number) => Math.round(seconds * MICROS) / MICROS;

function fraction(digits: string | undefined): number {
  return digits === undefined ? 0 : Number(`0.${digits}`);
}

/** Seconds after midnight of a time string; undefined when it is not one. */
export function parseTimeString(s: string): number | undefined {
  const m = TIME_RE.exec(s);
  if (m === null) return undefined;
  const hour = Number(m[1]);
  const min = Number(m[2]);
  const sec = m[3] === undefined ? 0 : Number(m[3]);
  if (hour > 23 || min > 59 || sec > 59) return undefined;
  let offset = 0;
  if (m[6] !== undefined) {
    const oh = Number(m[7]);
    const om = Number(m[8]);
    if (oh > 23 || om > 59) return undefined;
    offset = (m[6] === '-' ? -1 : 1) * (oh * 3600 + om * 60);
  }
  const local = hour * 3600 + min * 60 + sec + fraction(m[4]);
  const t = (((local - offset) % SECONDS_PER_DAY) + SECONDS_PER_DAY) % SECONDS_PER_DAY;
  return micros(t);
}

/** Signed seconds of a timedelta string; undefined when it is not one. */
export function parseTimedeltaString(s: string): number | undefined {
  const m = TIMEDELTA_RE.exec(s);
  if (m === null) return undefined;
  const min = Number(m[3]);
  const sec = m[4] === undefined ? 0 : Number(m[4]);
  if (min > 59 || sec > 59) return undefined;
  const magnitude = Number(m[2]) * 3600 + min * 60 + sec + fraction(m[5]);
  if (magnitude > TIMEDELTA_SECONDS_MAX) return undefined;
  return micros(m[1] === '-' ? -magnitude : magnitude);
}

/** The `time` detector of §8.1. */
export function isTimeString(s: string): boolean {
  return parseTimeString(s) !== undefined;
}

/** The `timedelta` detector of §8.1 (after `time`, so it takes what a time cannot be: a sign, hours past 23). */
export function isTimedeltaString(s: string): boolean {
  return parseTimedeltaString(s) !== undefined;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** `HH:MM:SS[.f]` of a non-negative number of seconds (hours may exceed 23 for timedeltas). */
function clock(seconds: number): string {
  const us = Math.round(seconds * MICROS);
  const whole = Math.floor(us / MICROS);
  const frac = us - whole * MICROS;
  const hours = Math.floor(whole / 3600);
  const base = `${pad(hours)}:${pad(Math.floor((whole % 3600) / 60))}:${pad(whole % 60)}`;
  return frac === 0 ? base : `${base}.${String(frac).padStart(6, '0').replace(/0+$/, '')}`;
}

/** Stored form of a time: `10:30:00`, `23:59:59.5`. */
export function formatTime(seconds: number): string {
  return clock(seconds);
}

/** Stored form of a timedelta: `+01:30:00`, `-00:00:01.25`. */
export function formatTimedelta(seconds: number): string {
  return (seconds < 0 ? '-' : '+') + clock(Math.abs(seconds));
}
