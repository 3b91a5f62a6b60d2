import fc from 'fast-check';
import { DEFAULT_DETECTION, detectType } from './detect.js';

describe('detectType (API.md §8.1 order)', () => {
  test('JSON values', () => {
    expect(detectType(true)).toBe('boolean');
    expect(detectType(-3)).toBe('integer');
    expect(detectType(2 ** 60)).toBe('integer');
    expect(detectType(1.5)).toBe('floating');
    expect(detectType(10n)).toBe('integer');
    expect(detectType({ a: 1 })).toBe('object');
    expect(detectType({ _value: 1.5, _type: 'text' })).toBe('floating');
    expect(detectType({ _datetime: { _year: 2000 } })).toBe('datetime');
    expect(detectType({ _date: '2000-01-01' })).toBe('date');
    expect(detectType({ _point: { _latitude: 1, _longitude: 2 } })).toBe('geo');
    expect(detectType(null)).toBeNull();
    expect(detectType(new Uint8Array(2))).toBeNull();
  });

  test('strings: date → datetime → boolean → text; numeric-looking strings stay text', () => {
    expect(detectType('2015-01-01')).toBe('date');
    expect(detectType('2015-01-01T10:00:00Z')).toBe('datetime');
    expect(detectType('2015/01/01 10:00')).toBe('datetime');
    expect(detectType('true')).toBe('boolean');
    expect(detectType('false')).toBe('boolean');
    expect(detectType('t')).toBe('text');
    expect(detectType('42')).toBe('text');
    expect(detectType('4.2e1')).toBe('text');
    expect(detectType('2015-02-30')).toBe('text');
  });

  test('arrays: the first non-null element, nested arrays flattened; empty or all-null fixes nothing', () => {
    expect(detectType([null, 1, 'a'])).toBe('array/integer');
    expect(detectType([[null], [['x']]])).toBe('array/text');
    expect(detectType([{ a: 1 }])).toBe('array/object');
    expect(detectType([{ _value: [2.5] }])).toBe('array/floating');
    expect(detectType([])).toBeNull();
    expect(detectType([null, [null]])).toBeNull();
  });

  test('detection flags switch steps off', () => {
    const off = (flag: keyof typeof DEFAULT_DETECTION) => ({ ...DEFAULT_DETECTION, [flag]: false });
    expect(detectType('2015-01-01', off('date'))).toBe('datetime');
    expect(detectType('2015-01-01', { ...off('date'), datetime: false })).toBe('text');
    expect(detectType('2015-01-01T00:00', off('datetime'))).toBe('text');
    expect(detectType('true', off('bool'))).toBe('text');
    expect(detectType('hello', off('text'))).toBe('keyword');
    expect(detectType(true, off('bool'))).toEqual({ undetectable: 'boolean detection is off' });
    expect(detectType(1, off('numeric'))).toEqual({ undetectable: 'numeric detection is off' });
  });

  test('property: every JSON value gets a type, or fixes nothing only when it holds no value', () => {
    fc.assert(fc.property(fc.jsonValue(), (v) => {
      const d = detectType(v);
      if (d === null) {
        expect(v === null || (Array.isArray(v) && JSON.stringify(v).replace(/[[\],\snul]/g, '') === '')).toBe(true);
      } else {
        expect(typeof d).toBe('string');
        expect(d).toMatch(/^(array\/)?(boolean|integer|floating|object|date|datetime|time|timedelta|uuid|geo|text)$/);
        // An array is `array/<type>`, or `geo` when it is a `[lon, lat(, h)]` point (§8.1).
        if (Array.isArray(v)) expect((d as string).startsWith('array/') || d === 'geo').toBe(true);
        else expect((d as string).startsWith('array/')).toBe(false);
      }
    }), { numRuns: 1000 });
  });
});
