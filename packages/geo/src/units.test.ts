import { TesseraError } from '@tessera/errors';
import { parseDistance } from './units.js';

function code(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    return err instanceof TesseraError ? `${err.status} ${err.code}` : String(err);
  }
  return 'ok';
}

describe('parseDistance (API.md §8.6)', () => {
  test('metres as numbers and strings with each unit', () => {
    expect(parseDistance(1500)).toBe(1500);
    expect(parseDistance('1500')).toBe(1500);
    expect(parseDistance('2.72km')).toBe(2720);
    expect(parseDistance('12 m')).toBe(12);
    expect(parseDistance('250mm')).toBe(0.25);
    expect(parseDistance('3cm')).toBe(0.03);
    expect(parseDistance('10in')).toBeCloseTo(0.254, 12);
    expect(parseDistance('1ft')).toBeCloseTo(0.3048, 12);
    expect(parseDistance('2yd')).toBeCloseTo(1.8288, 12);
    expect(parseDistance('1mi')).toBeCloseTo(1609.344, 9);
    expect(parseDistance('1nmi')).toBe(1852);
    expect(parseDistance('2NM')).toBe(3704);
    expect(parseDistance('1.5e3m')).toBe(1500);
    expect(parseDistance('1e-3km')).toBe(1);
  });

  test('bad distances are 400 invalid_geo', () => {
    for (const bad of ['', 'km', '3 parsecs', '2nm', '-1', -1, Infinity, NaN, null, {}, [1], '1e400', '1 2 km']) {
      expect(code(() => parseDistance(bad))).toBe('400 invalid_geo');
    }
  });
});
