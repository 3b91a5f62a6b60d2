/**
 * Distances (API.md §8.6): metres as a number, or a string of a number and a
 * unit among `mm cm m km in ft yd mi nmi NM` (`"2.72km"`, `"5 mi"`). Units are
 * case-sensitive: `nm` would be nanometres, which §8.6 does not list.
 */
import { geoErrors } from './errors.js';

/** Metric units scale by a power of ten, applied to the decimal text itself so `"2.72km"` is exactly 2720. */
const DECIMAL_EXPONENTS: ReadonlyMap<string, number> = new Map([['mm', -3], ['cm', -2], ['m', 0], ['km', 3]]);
const FACTORS: ReadonlyMap<string, number> = new Map([
  ['in', 0.0254], ['ft', 0.3048], ['yd', 0.9144], ['mi', 1609.344], ['nmi', 1852], ['NM', 1852],
]);

const DISTANCE_RE = /^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([a-zA-Z]*)\s*$/;

/** A distance in metres: a finite non-negative number, or a number with a unit. 400 otherwise. */
export function parseDistance(value: unknown, what = 'distance'): number {
  let metres: number;
  if (typeof value === 'number') {
    metres = value;
  } else if (typeof value === 'string') {
    const m = DISTANCE_RE.exec(value);
    if (m === null) throw geoErrors.invalid(`Invalid ${what} ${JSON.stringify(value.slice(0, 100))}: expected a number of metres or a number with a unit (mm cm m km in ft yd mi nmi NM)`);
    const [, number, unit] = m as unknown as [string, string, string];
    const exponent = DECIMAL_EXPONENTS.get(unit === '' ? 'm' : unit);
    const factor = FACTORS.get(unit);
    if (exponent !== undefined) {
      // Shifting the decimal text keeps it exact: `Number("2.72e3")` is 2720, while 2.72 * 1000 is 2720.0000000000005.
      metres = /[eE]/.test(number) ? Number(number) * 10 ** exponent : Number(`${number}e${exponent}`);
    } else if (factor !== undefined) {
      metres = Number(number) * factor;
    } else {
      throw geoErrors.invalid(`Unknown unit '${unit.slice(0, 20)}' in ${what}: expected one of mm cm m km in ft yd mi nmi NM`);
    }
  } else {
    throw geoErrors.invalid(`Invalid ${what}: expected a number or a string with a unit`);
  }
  if (!Number.isFinite(metres) || metres < 0) throw geoErrors.invalid(`Invalid ${what} ${String(value).slice(0, 100)}: expected a finite distance ≥ 0`);
  return metres === 0 ? 0 : metres;
}
