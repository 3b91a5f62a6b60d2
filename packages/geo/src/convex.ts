/**
 * Convex spherical rings (API.md §8.6 `_polygon` "(convex)" and `_chull`).
 * The gnomonic projection about the points' mean direction maps great
 * circles to straight lines, so a ring is convex on the sphere exactly when
 * its projection is convex in the plane, and the spherical convex hull is the
 * planar hull of the projected points (Andrew's monotone chain). Both need
 * the points in one open hemisphere, the projection's domain.
 *
 * Canonical ring (one value per shape, whatever the spelling): no repeated
 * or closing vertex, counter-clockwise seen from outside the sphere (the
 * interior on the left of each edge), starting at the smallest (lon, lat).
 */
import { geoErrors } from './errors.js';
import { type GeoPoint, pointVector } from './geometry.js';
import { cross, dot, normalize, type Vec3 } from './vector.js';

/** Points must be this far (sine of the angle) inside the hemisphere around their mean direction. */
const HEMISPHERE_MARGIN = 1e-9;
/**
 * Smallest ring area in the projection's units (about square radians): a
 * ring thinner than a millimetre has no area that double rounding can tell
 * from none, and containment tests on it would be noise.
 */
const AREA_MIN = 1e-20;

interface Projected {
  readonly x: Float64Array;
  readonly y: Float64Array;
}

/** `points` as a canonical convex ring: their hull when `hull`, else the ring as given (400 when not convex). */
export function convexRing(points: readonly GeoPoint[], hull: boolean, what: string): GeoPoint[] {
  const distinct = hull ? uniquePoints(points) : withoutRepeats(points);
  if (distinct.length < 3) throw geoErrors.invalid(`${what} needs at least 3 distinct points`);
  const { x, y } = project(distinct, what);
  const order = hull ? planarHull(x, y) : convexOrder(x, y, what);
  if (order.length < 3 || Math.abs(ringArea(x, y, order)) <= AREA_MIN) throw geoErrors.invalid(`${what} has no area: its points lie on one great circle`);
  const ring = order.map((i) => distinct[i]!);
  let first = 0;
  for (let i = 1; i < ring.length; i++) if (lessLonLat(ring[i]!, ring[first]!)) first = i;
  return [...ring.slice(first), ...ring.slice(0, first)];
}

function samePlace(a: GeoPoint, b: GeoPoint): boolean {
  return a.lat === b.lat && a.lon === b.lon;
}

function lessLonLat(a: GeoPoint, b: GeoPoint): boolean {
  return a.lon < b.lon || (a.lon === b.lon && a.lat < b.lat);
}

/** Consecutive repeats and the closing repeat of the first point (as WKT rings write it) removed. */
function withoutRepeats(points: readonly GeoPoint[]): GeoPoint[] {
  const out: GeoPoint[] = [];
  for (const p of points) if (out.length === 0 || !samePlace(out[out.length - 1]!, p)) out.push(p);
  while (out.length > 1 && samePlace(out[0]!, out[out.length - 1]!)) out.pop();
  return out;
}

function uniquePoints(points: readonly GeoPoint[]): GeoPoint[] {
  const seen = new Set<string>();
  const out: GeoPoint[] = [];
  for (const p of points) {
    const key = `${p.lon} ${p.lat}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(p);
  }
  return out;
}

/** Gnomonic coordinates about the mean direction c, on a basis (e1, e2) with e1 × e2 = c. */
function project(points: readonly GeoPoint[], what: string): Projected {
  const vectors = points.map(pointVector);
  let sx = 0;
  let sy = 0;
  let sz = 0;
  for (const v of vectors) {
    sx += v[0];
    sy += v[1];
    sz += v[2];
  }
  const c = normalize([sx, sy, sz]);
  if (c[0] === 0 && c[1] === 0 && c[2] === 0) throw geoErrors.invalid(`${what} must lie within a hemisphere`);
  const axis: Vec3 = Math.abs(c[2]) < 0.9 ? [0, 0, 1] : [1, 0, 0];
  const e1 = normalize(cross(axis, c));
  const e2 = cross(c, e1);
  const x = new Float64Array(vectors.length);
  const y = new Float64Array(vectors.length);
  for (let i = 0; i < vectors.length; i++) {
    const v = vectors[i]!;
    const h = dot(v, c);
    if (h <= HEMISPHERE_MARGIN) throw geoErrors.invalid(`${what} must lie within a hemisphere`);
    x[i] = dot(v, e1) / h;
    y[i] = dot(v, e2) / h;
  }
  return { x, y };
}

/** Twice the signed planar area of the ring `order` (positive counter-clockwise). */
function ringArea(x: Float64Array, y: Float64Array, order: readonly number[]): number {
  let area = 0;
  for (let k = 0; k < order.length; k++) {
    const i = order[k]!;
    const j = order[(k + 1) % order.length]!;
    area += x[i]! * y[j]! - x[j]! * y[i]!;
  }
  return area;
}

function turn(x: Float64Array, y: Float64Array, o: number, a: number, b: number): number {
  return (x[a]! - x[o]!) * (y[b]! - y[o]!) - (y[a]! - y[o]!) * (x[b]! - x[o]!);
}

/** Indices of the planar convex hull, counter-clockwise, collinear points dropped. */
function planarHull(x: Float64Array, y: Float64Array): number[] {
  const idx = Array.from({ length: x.length }, (_, i) => i).sort((a, b) => x[a]! - x[b]! || y[a]! - y[b]!);
  const lower: number[] = [];
  for (const i of idx) {
    while (lower.length >= 2 && turn(x, y, lower[lower.length - 2]!, lower[lower.length - 1]!, i) <= 0) lower.pop();
    lower.push(i);
  }
  const upper: number[] = [];
  for (let k = idx.length - 1; k >= 0; k--) {
    const i = idx[k]!;
    while (upper.length >= 2 && turn(x, y, upper[upper.length - 2]!, upper[upper.length - 1]!, i) <= 0) upper.pop();
    upper.push(i);
  }
  lower.pop();
  upper.pop();
  return [...lower, ...upper];
}

/**
 * The ring's indices counter-clockwise (reversed when given clockwise), or
 * 400 when it is not convex: a turn the other way, or a ring winding round
 * more than once (a pentagram turns one way throughout).
 */
function convexOrder(x: Float64Array, y: Float64Array, what: string): number[] {
  const n = x.length;
  const area = ringArea(x, y, Array.from({ length: n }, (_, i) => i));
  let scale = 0;
  for (let i = 0; i < n; i++) scale = Math.max(scale, Math.abs(x[i]!), Math.abs(y[i]!));
  const tolerance = 1e-12 * scale * scale;
  if (Math.abs(area) <= AREA_MIN) throw geoErrors.invalid(`${what} has no area: its points lie on one great circle`);
  const sign = area > 0 ? 1 : -1;
  let winding = 0;
  for (let i = 0; i < n; i++) {
    const a = i;
    const b = (i + 1) % n;
    const c = (i + 2) % n;
    const t = turn(x, y, a, b, c) * sign;
    if (t < -tolerance) throw geoErrors.invalid(`${what} is not convex`);
    const ux = x[b]! - x[a]!;
    const uy = y[b]! - y[a]!;
    const vx = x[c]! - x[b]!;
    const vy = y[c]! - y[b]!;
    winding += Math.atan2(t, (ux * vx + uy * vy));
  }
  if (winding > 2 * Math.PI + 1e-6) throw geoErrors.invalid(`${what} is not convex: it winds round more than once`);
  const order = Array.from({ length: n }, (_, i) => i);
  return sign > 0 ? order : order.reverse();
}
