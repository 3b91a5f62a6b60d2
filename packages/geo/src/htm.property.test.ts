/**
 * HTM invariants on random points and shapes: a point's trixel holds it
 * (within rounding) and its parent is the trixel one level up; a covering
 * is bounded and holds the trixel of every point inside its shape.
 */
import fc from 'fast-check';
import { ancestorTrixel, coverRegion, HTM_LEVEL_MAX, trixelCorners, trixelIds, trixelLevel, trixelOf } from './htm.js';
import { regionOf } from './region.js';
import { arbInsidePoints, arbPointsFor, arbShape, geometryOf } from './geo.fixture.js';
import { cross, dot, normalize, toVector } from './vector.js';

const lat = fc.double({ min: -90, max: 90, noNaN: true });
const lon = fc.double({ min: -180, max: 180, noNaN: true });

describe('trixel of a point', () => {
  test('stable across levels: the parent of its level-L trixel is its level-(L−1) trixel; ids have 4 + 2L bits', () => {
    fc.assert(fc.property(lat, lon, fc.integer({ min: 1, max: HTM_LEVEL_MAX }), (la, lo, level) => {
      const p = toVector(la, lo);
      const id = trixelOf(p, level);
      expect(trixelLevel(id)).toBe(level);
      expect(id >> 2n).toBe(trixelOf(p, level - 1));
      const all = trixelIds(p, [0, level, 3]);
      expect(all).toEqual([trixelOf(p, 0), id, trixelOf(p, 3)]);
    }), { numRuns: 500 });
  });

  test('the trixel holds the point, up to rounding', () => {
    fc.assert(fc.property(lat, lon, fc.integer({ min: 0, max: HTM_LEVEL_MAX }), (la, lo, level) => {
      const p = toVector(la, lo);
      const c = trixelCorners(trixelOf(p, level));
      for (let i = 0; i < 3; i++) {
        const n = normalize(cross(c[i]!, c[(i + 1) % 3]!));
        expect(dot(n, p)).toBeGreaterThanOrEqual(-1e-13);
      }
    }), { numRuns: 500 });
  });
});

describe('coverRegion', () => {
  test('bounded, and every point inside the shape lies in a covering trixel', () => {
    fc.assert(fc.property(
      fc.array(arbShape, { minLength: 1, maxLength: 2 }), fc.integer({ min: 0, max: 18 }), fc.integer({ min: 8, max: 200 }),
      fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      (values, maxLevel, maxTrixels, seed) => {
        const g = geometryOf(values);
        fc.pre(g !== null);
        const region = regionOf(g!);
        const cover = coverRegion(region, maxLevel, maxTrixels);
        expect(cover.length).toBeLessThanOrEqual(Math.max(maxTrixels, 8));
        for (const t of cover) expect(t.level).toBeLessThanOrEqual(maxLevel);
        const points = [...fc.sample(arbPointsFor(g!), { numRuns: 1, seed })[0]!, ...fc.sample(arbInsidePoints(g!), { numRuns: 1, seed })[0]!];
        for (const [la, lo] of points) {
          const p = toVector(la, lo);
          if (!region.contains(p)) continue;
          const id = trixelOf(p, maxLevel);
          expect({ la, lo, covered: cover.some((t) => ancestorTrixel(id, maxLevel, t.level) === t.id) }).toEqual({ la, lo, covered: true });
        }
      },
    ), { numRuns: 150 });
  });

  test('points on trixel corners and edges are covered by a tiny circle around them', () => {
    // Corners are where rounding decides between trixels: the covering must hold whichever one the descent picked.
    fc.assert(fc.property(fc.bigInt({ min: 8n * 4n ** 6n, max: 16n * 4n ** 6n - 1n }), fc.integer({ min: 0, max: 2 }), fc.integer({ min: 6, max: 20 }), (id, corner, level) => {
      const p = trixelCorners(id)[corner]!;
      const la = Math.asin(Math.max(-1, Math.min(1, p[2]))) * 180 / Math.PI;
      const lo = Math.atan2(p[1], p[0]) * 180 / Math.PI;
      const g = geometryOf([{ _circle: { _latitude: la, _longitude: lo, _radius: 0.01 } }])!;
      const region = regionOf(g);
      const q = toVector(la, lo);
      fc.pre(region.contains(q));
      const cover = coverRegion(region, level, 64);
      const own = trixelOf(q, level);
      expect(cover.some((t) => ancestorTrixel(own, level, t.level) === t.id)).toBe(true);
    }), { numRuns: 200 });
  });

  test('a small circle is covered by few fine trixels; a hemisphere stops at a coarse level', () => {
    const small = regionOf(geometryOf(['CIRCLE(-95.6 31.7, 1000)'])!);
    const fine = coverRegion(small, 15, 64);
    expect(fine.length).toBeGreaterThan(0);
    expect(Math.max(...fine.map((t) => t.level))).toBeGreaterThanOrEqual(12);
    const huge = regionOf(geometryOf(['CIRCLE(0 0, 10000000)'])!);
    const coarse = coverRegion(huge, 15, 64);
    expect(coarse.length).toBeLessThanOrEqual(64);
    expect(Math.max(...coarse.map((t) => t.level))).toBeLessThan(4);
  });
});
