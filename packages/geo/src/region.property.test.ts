/**
 * Exact containment against brute force on random shapes and points:
 * circles by the haversine formula, convex polygons by the gnomonic
 * projection and planar ray casting, multi-shapes and collections as the
 * union of their parts, polygons of several rings by parity.
 */
import fc from 'fast-check';
import { arbPointsFor, arbShape, geometryOf } from './geo.fixture.js';
import { type Geometry, pointVector } from './geometry.js';
import { parseGeoValue } from './objects.js';
import { regionOf } from './region.js';
import { cross, dot, EARTH_RADIUS_M, normalize, toVector, type Vec3 } from './vector.js';

const RAD = Math.PI / 180;

function haversine(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const h = Math.sin(((lat2 - lat1) * RAD) / 2) ** 2 + Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * Math.sin(((lon2 - lon1) * RAD) / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

type Verdict = 'in' | 'out' | 'edge';

/** Within this of a boundary (metres for circles, gnomonic units ≈ radians for rings) rounding may decide: not asserted. */
const EDGE_M = 1e-6;
const EDGE_PLANE = 1e-12;

function circleVerdict(c: { center: { lat: number; lon: number }; radius: number }, lat: number, lon: number): Verdict {
  const d = haversine(c.center.lat, c.center.lon, lat, lon);
  if (Math.abs(d - c.radius) <= EDGE_M * Math.max(1, c.radius)) return 'edge';
  return d <= c.radius ? 'in' : 'out';
}

/** Point in a convex spherical ring: project about the ring's mean direction and ray-cast in the plane. */
function ringVerdict(ring: ReadonlyArray<{ lat: number; lon: number }>, lat: number, lon: number): Verdict {
  const vs = ring.map((p) => toVector(p.lat, p.lon));
  const c = normalize(vs.reduce<Vec3>((s, v) => [s[0] + v[0], s[1] + v[1], s[2] + v[2]], [0, 0, 0]));
  const e1 = normalize(cross(Math.abs(c[2]) < 0.9 ? [0, 0, 1] : [1, 0, 0], c));
  const e2 = cross(c, e1);
  const p = toVector(lat, lon);
  if (dot(p, c) <= 1e-6) return 'out';
  const proj = (v: Vec3): [number, number] => [dot(v, e1) / dot(v, c), dot(v, e2) / dot(v, c)];
  const [px, py] = proj(p);
  const poly = vs.map(proj);
  let inside = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const [xi, yi] = poly[i]!;
    const [xj, yj] = poly[j]!;
    if (segmentDistance(px, py, xi, yi, xj, yj) <= EDGE_PLANE) return 'edge';
    if ((yi > py) !== (yj > py) && px < ((xj - xi) * (py - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside ? 'in' : 'out';
}

function segmentDistance(px: number, py: number, ax: number, ay: number, bx: number, by: number): number {
  const dx = bx - ax;
  const dy = by - ay;
  const t = Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy || 1)));
  return Math.hypot(px - ax - t * dx, py - ay - t * dy);
}

/** Any part says edge → edge; else the union (parity for rings, all for CONVEX). */
function combine(verdicts: Verdict[], rule: 'any' | 'all' | 'odd'): Verdict {
  if (verdicts.includes('edge')) return 'edge';
  const n = verdicts.filter((v) => v === 'in').length;
  const inside = rule === 'any' ? n > 0 : rule === 'all' ? n === verdicts.length : n % 2 === 1;
  return inside ? 'in' : 'out';
}

function bruteContains(g: Geometry, lat: number, lon: number): Verdict {
  const same = (p: { lat: number; lon: number }): Verdict => (p.lat === lat && p.lon === lon ? 'in' : 'out');
  switch (g.kind) {
    case 'point':
      return same(g.point);
    case 'circle':
      return circleVerdict(g.circle, lat, lon);
    case 'convex':
      return combine(g.circles.map((c) => circleVerdict(c, lat, lon)), 'all');
    case 'polygon':
      return combine(g.rings.map((ring) => ringVerdict(ring, lat, lon)), 'odd');
    case 'multipoint':
      return combine(g.points.map(same), 'any');
    case 'multicircle':
      return combine(g.circles.map((c) => circleVerdict(c, lat, lon)), 'any');
    case 'multiconvex':
      return combine(g.convexes.map((cs) => combine(cs.map((c) => circleVerdict(c, lat, lon)), 'all')), 'any');
    case 'multipolygon':
      return combine(g.polygons.map((rings) => combine(rings.map((ring) => ringVerdict(ring, lat, lon)), 'odd')), 'any');
    case 'collection':
      return combine(g.geometries.map((m) => bruteContains(m, lat, lon)), 'any');
  }
}

describe('regionOf(g).contains equals brute force', () => {
  test('random circles, convex hulls and collections of them', () => {
    fc.assert(fc.property(fc.array(arbShape, { minLength: 1, maxLength: 3 }), fc.integer({ min: 0, max: 2 ** 31 - 1 }), (values, seed) => {
      const g = geometryOf(values);
      fc.pre(g !== null);
      const region = regionOf(g!);
      const points = fc.sample(arbPointsFor(g!), { numRuns: 1, seed })[0]!;
      for (const [la, lo] of points) {
        const verdict = bruteContains(g!, la, lo);
        if (verdict === 'edge') continue;
        expect({ la, lo, inside: region.contains(toVector(la, lo)) }).toEqual({ la, lo, inside: verdict === 'in' });
      }
    }), { numRuns: 300 });
  });

  test('polygon rings exclusive-or: a hole is outside', () => {
    const g = parseGeoValue('POLYGON((0 0, 10 0, 10 10, 0 10), (4 4, 6 4, 6 6, 4 6))');
    const region = regionOf(g);
    expect(region.contains(toVector(2, 2))).toBe(true);
    expect(region.contains(toVector(5, 5))).toBe(false);
    expect(region.contains(toVector(11, 5))).toBe(false);
  });

  test('shape points: a point holds itself only; vertices and circle edges are inside', () => {
    const point = parseGeoValue([-73.97, 40.78]);
    expect(regionOf(point).contains(pointVector({ lon: -73.97, lat: 40.78 }))).toBe(true);
    expect(regionOf(point).contains(toVector(40.78, -73.9701))).toBe(false);
    expect(regionOf(parseGeoValue('POLYGON((0 0, 10 0, 10 10, 0 10))')).contains(toVector(0, 0))).toBe(true);
    expect(regionOf(parseGeoValue('CIRCLE(0 0, 1000000)')).contains(toVector(0, 1_000_000 / EARTH_RADIUS_M / RAD * 0.999999))).toBe(true);
    expect(regionOf(parseGeoValue('CIRCLE(0 0, 1000000)')).contains(toVector(0, 1_000_000 / EARTH_RADIUS_M / RAD * 1.000001))).toBe(false);
    expect(regionOf(parseGeoValue('CIRCLE(0 0, 40000000)')).contains(toVector(0, 180))).toBe(true);
  });
});
