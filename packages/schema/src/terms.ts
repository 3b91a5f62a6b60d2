/**
 * Term names (API.md §5.8): `<prefix><type char><token>` under a field,
 * `<type char><token>` globally, `Z<prefix>S<stem>` for stems, and accuracy
 * terms `<prefix><<hex step>>.<type char><bucket token>` (times: `N`, see
 * accuracyTypeChar).
 *
 * Numeric and date tokens are Tessera's own encoding (§5.8 leaves it open):
 * the float64 as 8 big-endian bytes with the sign bit flipped (all bits
 * inverted for negatives), so unsigned byte order equals numeric order,
 * written as lower-case hex with trailing `00` bytes dropped (0 → `80`,
 * 100 → `c059`, -1 → `400fffffffffffff`: negatives invert, so keep all 8 bytes). Hex keeps terms printable and free of `.`
 * (INFO splits term names on `.`) and sorts as the bytes do (in byte and in
 * UTF-16 order alike). Dropping trailing zero bytes keeps both order and
 * uniqueness, because every full key has the same length and a zero byte is
 * the smallest: a shortened key sorts exactly where the full one did. Round
 * numbers, the common case, get short terms.
 */
import { dateUnitStart } from './dates.js';
import { geoValueToken } from './geo.js';
import type { IndexValue } from './convert.js';
import type { FieldSpec } from './spec.js';
import { DATE_UNIT_SECONDS, type DateUnit, isDateType, isTimeType } from './types.js';

const f64 = new Float64Array(1);
const bytes = new Uint8Array(f64.buffer);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
/** A byte as two lowercase hex digits: a token is at most 8 of these joined (half the concatenations of single digits). */
const HEX_BYTES: readonly string[] = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));
/** Big-endian key bytes, reused: term encoding runs once per indexed number. */
const digits = new Uint8Array(8);

/** Order-preserving token of a finite number (`-0` is `0`). */
export function sortableToken(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`sortableToken of a non-finite number: ${n}`);
  f64[0] = n === 0 ? 0 : n;
  const negative = n < 0;
  let out = '';
  let end = 0;
  for (let i = 0; i < 8; i++) {
    let b = bytes[LITTLE_ENDIAN ? 7 - i : i]!;
    b = negative ? ~b & 0xff : i === 0 ? b ^ 0x80 : b;
    digits[i] = b;
    if (b !== 0) end = i + 1;
  }
  for (let i = 0; i < end; i++) out += HEX_BYTES[digits[i]!]!;
  return out;
}

/** Inverse of `sortableToken`. */
export function sortableNumber(token: string): number {
  if (token.length === 0 || token.length > 16 || token.length % 2 !== 0 || !/^[0-9a-f]*$/.test(token)) {
    throw new RangeError(`Not a sortable number token: '${token}'`);
  }
  const negative = parseInt(token.slice(0, 2), 16) < 0x80;
  for (let i = 0; i < 8; i++) {
    let b = 2 * i < token.length ? parseInt(token.slice(2 * i, 2 * i + 2), 16) : 0;
    b = negative ? ~b & 0xff : i === 0 ? b ^ 0x80 : b;
    bytes[LITTLE_ENDIAN ? 7 - i : i] = b;
  }
  return f64[0]!;
}

/** The parts of a FieldSpec that term naming needs. */
export type TermSpec = Pick<FieldSpec, 'type' | 'typeChar' | 'prefix' | 'boolTerm' | 'accuracy'>;

/**
 * Type char + token of a converted value: keyword lower-cased unless
 * `_bool_term`; boolean `t`/`f`; numbers and dates (epoch seconds) as
 * sortable tokens (times and timedeltas: seconds); a text value is one
 * already-analysed token; a uuid its canonical text; a geo value (its
 * canonical EWKT) a hash of it (geo.ts `geoValueToken`).
 */
export function valueToken(spec: Pick<TermSpec, 'type' | 'typeChar' | 'boolTerm'>, value: IndexValue): string {
  switch (spec.type) {
    case 'keyword': {
      const s = String(value);
      return spec.typeChar + (spec.boolTerm ? s : s.toLowerCase());
    }
    case 'text':
    case 'script':
      return spec.typeChar + String(value);
    case 'uuid':
      // Already canonical: lower case, or a condensed form verbatim (convert.ts).
      return spec.typeChar + String(value);
    case 'geo':
      return spec.typeChar + geoValueToken(String(value));
    case 'boolean':
      return spec.typeChar + (value === true ? 't' : 'f');
    default:
      return spec.typeChar + sortableToken(value as number);
  }
}

/** Term of a value under the field's own prefix. */
export function fieldTerm(spec: TermSpec, value: IndexValue): string {
  return spec.prefix + valueToken(spec, value);
}

/** Term of a value under the global prefix (found without naming a field). */
export function globalTerm(spec: TermSpec, value: IndexValue): string {
  return valueToken(spec, value);
}

/** A text token under a prefix (`''` for global). */
export function textTerm(prefix: string, token: string): string {
  return `${prefix}S${token}`;
}

/** A stemmed text token: `Z<prefix>S<stem>`. */
export function stemTerm(prefix: string, stem: string): string {
  return `Z${prefix}S${stem}`;
}

/** `<hex step>.` of a numeric step or a date unit (by its nominal seconds: hour → `<e10>.`). */
export function accuracyPrefix(step: number | DateUnit): string {
  let prefix = ACCURACY_PREFIXES.get(step);
  if (prefix === undefined) {
    const n = typeof step === 'number' ? step : DATE_UNIT_SECONDS[step];
    prefix = `<${n.toString(16)}>.`;
    // Steps come from schemas (a handful); a bound keeps hostile schemas from growing the memo.
    if (ACCURACY_PREFIXES.size < ACCURACY_PREFIXES_MAX) ACCURACY_PREFIXES.set(step, prefix);
  }
  return prefix;
}

/** accuracyPrefix per step, computed once (it is built for every accuracy term of every document). */
const ACCURACY_PREFIXES = new Map<number | DateUnit, string>();
const ACCURACY_PREFIXES_MAX = 4096;

/** Start of the bucket holding `value`: `floor(v / s) · s`, or the start of the date unit. */
export function accuracyBucket(value: number, step: number | DateUnit): number {
  if (typeof step === 'string') return dateUnitStart(value, step);
  const b = Math.floor(value / step) * step;
  return b === 0 ? 0 : b;
}

/**
 * Type char of a field's accuracy terms: the field's own, except for times
 * and timedeltas, whose buckets are plain numbers of seconds and so numeric
 * (`N`) terms, as Xapiand names them (`time.<3c>.N…` beside the value's
 * `time.T…`).
 */
export function accuracyTypeChar(spec: Pick<TermSpec, 'type' | 'typeChar'>): string {
  return isTimeType(spec.type) ? 'N' : spec.typeChar;
}

/** Accuracy terms of a numeric or date value, one per level, under `prefix` (the field's by default, `''` global). */
export function accuracyTerms(spec: TermSpec, value: number, prefix: string = spec.prefix): string[] {
  const out: string[] = [];
  const dates = isDateType(spec.type);
  const typeChar = accuracyTypeChar(spec);
  for (const step of spec.accuracy as ReadonlyArray<number | DateUnit>) {
    if (dates !== (typeof step === 'string')) continue;
    out.push(prefix + accuracyPrefix(step) + typeChar + sortableToken(accuracyBucket(value, step)));
  }
  return out;
}
