import { ancestorTrixel, trixelCorners, trixelLevel, trixelOf } from './htm.js';
import { toVector } from './vector.js';

describe('HTM ids (the HTM papers, Xapiand htm.cc)', () => {
  test('level-0 trixels are the octants: S0–S3 = 8–11 south, N0–N3 = 12–15 north', () => {
    expect(trixelOf(toVector(45, 45), 0)).toBe(15n); // N3: x>0, y>0, z>0
    expect(trixelOf(toVector(45, 135), 0)).toBe(14n); // N2
    expect(trixelOf(toVector(45, -135), 0)).toBe(13n); // N1
    expect(trixelOf(toVector(45, -45), 0)).toBe(12n); // N0
    expect(trixelOf(toVector(-45, 45), 0)).toBe(8n); // S0
    expect(trixelOf(toVector(-45, 135), 0)).toBe(9n); // S1
    expect(trixelOf(toVector(-45, -135), 0)).toBe(10n); // S2
    expect(trixelOf(toVector(-45, -45), 0)).toBe(11n); // S3
  });

  test('children: corner children 0–2 at the parent corners, 3 in the middle', () => {
    // N3 = (v2, v0, v1) = (lon 90, north pole, lon 0): the pole is corner v1 of the list → child 1.
    expect(trixelOf(toVector(89.9, 45), 1)).toBe(15n * 4n + 1n);
    expect(trixelOf(toVector(0.1, 89.9), 1)).toBe(15n * 4n + 0n);
    expect(trixelOf(toVector(0.1, 0.1), 1)).toBe(15n * 4n + 2n);
    expect(trixelOf(toVector(35.26, 45), 1)).toBe(15n * 4n + 3n);
  });

  test('levels, ancestors and corners of ids up to level 25', () => {
    const p = toVector(40.78, -73.97);
    const id25 = trixelOf(p, 25);
    expect(trixelLevel(id25)).toBe(25);
    expect(id25 > 2n ** 53n).toBe(true);
    expect(ancestorTrixel(id25, 25, 10)).toBe(trixelOf(p, 10));
    expect(trixelCorners(15n)).toEqual([[0, 1, 0], [0, 0, 1], [1, 0, 0]]);
    expect(() => trixelLevel(7n)).toThrow(RangeError);
    expect(() => trixelLevel(16n)).toThrow(RangeError);
  });
});
