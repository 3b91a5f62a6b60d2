import fc from 'fast-check';
import { addExact, addSquareExact } from './exact-sum.js';

describe('exact sums', () => {
  // Multiples of 2^-20 up to 2^40: exactly representable, so the exact sum is an integer count of 2^-20 units.
  const SCALE = 2 ** 20;
  const value = fc.integer({ min: -(2 ** 40), max: 2 ** 40 }).map((m) => m / SCALE);
  const units = (x: number): bigint => BigInt(x * SCALE);

  it('the partials add up to the exact sum, in any order', () => {
    fc.assert(fc.property(fc.array(value, { maxLength: 60 }), (xs) => {
      const partials: number[] = [];
      for (const x of xs) addExact(partials, x);
      const exact = xs.reduce((s, x) => s + units(x), 0n);
      expect(partials.reduce((s, p) => s + units(p), 0n)).toBe(exact);
      for (let i = 1; i < partials.length; i++) expect(Math.abs(partials[i]!)).toBeGreaterThan(Math.abs(partials[i - 1]!));
    }));
    const partials: number[] = [];
    for (const x of [1e100, 1, -1e100]) addExact(partials, x);
    expect(partials).toEqual([1]);
  });

  it('squares are added exactly', () => {
    fc.assert(fc.property(fc.array(value, { maxLength: 30 }), (xs) => {
      const partials: number[] = [];
      for (const x of xs) addSquareExact(partials, x);
      const exact = xs.reduce((s, x) => s + units(x) * units(x), 0n);
      expect(partials.reduce((s, p) => s + BigInt(p * SCALE * SCALE), 0n)).toBe(exact);
    }));
  });
});
