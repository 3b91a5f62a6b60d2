import fc from 'fast-check';
import { parseDate } from './dates.js';
import { resolveSpec, rootInherited } from './spec.js';
import {
  accuracyBucket, accuracyPrefix, accuracyTerms, fieldTerm, globalTerm, sortableNumber, sortableToken, stemTerm, textTerm,
} from './terms.js';
import type { ScalarType } from './types.js';

const spec = (type: ScalarType, options: Record<string, unknown> = {}, path = 'f') =>
  resolveSpec(path, type, false, options, { ...rootInherited({}), prefix: `${path}.` });

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

describe('sortable tokens', () => {
  test('examples: round numbers are short', () => {
    expect(sortableToken(0)).toBe('80');
    expect(sortableToken(-0)).toBe('80');
    expect(sortableToken(100)).toBe('c059');
    expect(sortableToken(-1)).toBe('400fffffffffffff'); // negatives invert, so they keep all 8 bytes
    expect(sortableToken(1)).toBe('bff0');
    expect(() => sortableToken(NaN)).toThrow(RangeError);
    expect(() => sortableNumber('')).toThrow(RangeError);
    expect(() => sortableNumber('8.')).toThrow(RangeError);
  });

  test('property: token order is numeric order, tokens round-trip, and carry no "."', () => {
    const num = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.constantFrom(0, -0, 1e-320, -1e-320, Number.MAX_VALUE, -Number.MAX_VALUE));
    fc.assert(fc.property(num, num, (a, b) => {
      const ta = sortableToken(a);
      const tb = sortableToken(b);
      expect(cmp(ta, tb)).toBe(Math.sign(a - b) || 0);
      expect(Buffer.compare(Buffer.from(ta), Buffer.from(tb))).toBe(Math.sign(a - b) || 0);
      expect(sortableNumber(ta)).toBe(a === 0 ? 0 : a);
      expect(ta).toMatch(/^[0-9a-f]+$/);
    }), { numRuns: 5000 });
  });

  test('property: sorting tokens sorts the numbers', () => {
    fc.assert(fc.property(fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { maxLength: 50 }), (xs) => {
      const byToken = [...xs].sort((a, b) => cmp(sortableToken(a), sortableToken(b)));
      const byValue = [...xs].sort((a, b) => a - b);
      expect(byToken.map(sortableToken)).toEqual(byValue.map(sortableToken));
    }));
  });
});

describe('term names (API.md §5.8)', () => {
  test('field, global and stem terms', () => {
    expect(fieldTerm(spec('keyword'), 'MiXed')).toBe('f.Kmixed');
    expect(fieldTerm(spec('keyword', { _bool_term: true }), 'MiXed')).toBe('f.KMiXed');
    expect(globalTerm(spec('keyword'), 'A')).toBe('Ka');
    expect(fieldTerm(spec('boolean'), true)).toBe('f.Bt');
    expect(globalTerm(spec('boolean'), false)).toBe('Bf');
    expect(fieldTerm(spec('integer'), 100)).toBe('f.Nc059');
    expect(fieldTerm(spec('datetime'), 0)).toBe('f.D80');
    expect(fieldTerm(spec('text'), 'word')).toBe('f.Sword');
    expect(textTerm('types.', 'a')).toBe('types.Sa');
    expect(stemTerm('f.', 'run')).toBe('Zf.Srun');
  });

  test('accuracy prefixes and terms', () => {
    expect(accuracyPrefix(100)).toBe('<64>.');
    expect(accuracyPrefix(1000)).toBe('<3e8>.');
    expect(accuracyPrefix('hour')).toBe('<e10>.');
    expect(accuracyBucket(180, 100)).toBe(100);
    expect(accuracyBucket(-20, 100)).toBe(-100);
    const age = spec('integer', { _accuracy: [10, 100] }, 'age');
    expect(accuracyTerms(age, 123)).toEqual([`age.<a>.N${sortableToken(120)}`, `age.<64>.N${sortableToken(100)}`]);
    expect(accuracyTerms(age, 123, '')).toEqual([`<a>.N${sortableToken(120)}`, `<64>.N${sortableToken(100)}`]);
    const when = spec('datetime', { _accuracy: ['day', 'year'] }, 'when');
    const t = parseDate('2015-06-07T08:09:10');
    expect(accuracyTerms(when, t)).toEqual([
      `when.<15180>.D${sortableToken(parseDate('2015-06-07'))}`,
      `when.<1e13380>.D${sortableToken(parseDate('2015-01-01'))}`,
    ]);
    expect(accuracyTerms(spec('integer'), 5)).toHaveLength(6);
    expect(accuracyTerms(spec('datetime'), 5)).toHaveLength(6);
    expect(accuracyTerms(spec('text'), 5)).toEqual([]);
  });
});
