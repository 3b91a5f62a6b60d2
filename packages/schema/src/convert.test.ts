import { TesseraError } from '@tessera/errors';
import { convertValue } from './convert.js';
import type { ScalarType } from './types.js';

function fail(type: ScalarType, value: unknown): string {
  try {
    convertValue(type, value, 'f');
  } catch (err) {
    if (err instanceof TesseraError) return `${err.status} ${err.code}: ${err.message}`;
    throw err;
  }
  throw new Error(`converted ${String(value)} to ${type}`);
}

describe('convertValue', () => {
  test('text and keyword take strings, numbers and booleans', () => {
    expect(convertValue('text', 'a b', 'f')).toEqual({ index: 'a b', stored: 'a b' });
    expect(convertValue('text', 1.5, 'f')).toEqual({ index: '1.5', stored: 1.5 });
    expect(convertValue('keyword', true, 'f')).toEqual({ index: 'true', stored: true });
    expect(fail('text', { a: 1 })).toBe("400 type_mismatch: Type mismatch 'text' -> 'object'");
    expect(fail('keyword', 'x'.repeat(246))).toBe('400 keyword_too_long: Keyword too long');
    expect(convertValue('keyword', 'x'.repeat(245), 'f').index).toHaveLength(245);
    expect(fail('keyword', 'é'.repeat(123))).toBe('400 keyword_too_long: Keyword too long');
  });

  test('integer and positive', () => {
    expect(convertValue('integer', '-42', 'f')).toEqual({ index: -42, stored: '-42' });
    expect(convertValue('integer', 7n, 'f').index).toBe(7);
    expect(convertValue('positive', 0, 'f').index).toBe(0);
    expect(Object.is(convertValue('integer', -0, 'f').index, 0)).toBe(true);
    expect(fail('integer', 'abc')).toBe("400 type_mismatch: Type mismatch 'integer' -> 'text'");
    expect(fail('integer', 1.5)).toBe("400 type_mismatch: Type mismatch 'integer' -> 'floating'");
    expect(fail('integer', true)).toBe("400 type_mismatch: Type mismatch 'integer' -> 'boolean'");
    expect(fail('integer', '2015-01-01')).toBe("400 type_mismatch: Type mismatch 'integer' -> 'date'");
    expect(fail('integer', '99999999999999999999')).toMatch(/^400 invalid_value/);
    expect(fail('positive', -1)).toBe("400 invalid_value: Invalid 'positive' value for field 'f': -1 is negative");
    expect(fail('positive', '-3')).toMatch(/^400 invalid_value/);
  });

  test('floating must be finite', () => {
    expect(convertValue('floating', '2.5e3', 'f').index).toBe(2500);
    expect(convertValue('floating', 3, 'f').index).toBe(3);
    expect(fail('floating', Infinity)).toMatch(/^400 invalid_value/);
    expect(fail('floating', NaN)).toMatch(/^400 invalid_value/);
    expect(fail('floating', 'Infinity')).toBe("400 type_mismatch: Type mismatch 'floating' -> 'text'");
  });

  test('boolean', () => {
    for (const v of [true, 'true', 't', '1', 'TRUE']) expect(convertValue('boolean', v, 'f').index).toBe(true);
    for (const v of [false, 'false', 'f', '0']) expect(convertValue('boolean', v, 'f').index).toBe(false);
    expect(fail('boolean', 'yes')).toBe("400 type_mismatch: Type mismatch 'boolean' -> 'text'");
    expect(fail('boolean', 1)).toBe("400 type_mismatch: Type mismatch 'boolean' -> 'integer'");
  });

  test('dates: epoch seconds to index, stored form to store', () => {
    expect(convertValue('datetime', '2015-01-01', 'f')).toEqual({ index: 1420070400, stored: '2015-01-01T00:00:00' });
    expect(convertValue('date', 1420070400.001, 'f')).toEqual({ index: 1420070400.001, stored: '2015-01-01T00:00:00.001' });
    expect(convertValue('date', { _date: { _year: 2015 } }, 'f').stored).toBe('2015-01-01T00:00:00');
    expect(fail('datetime', 'soon')).toBe("400 invalid_date: Invalid date 'soon'");
    expect(fail('datetime', true)).toBe("400 type_mismatch: Type mismatch 'datetime' -> 'boolean'");
  });
});
