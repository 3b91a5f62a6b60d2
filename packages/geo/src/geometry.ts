/**
 * The geometries of API.md §8.6 as plain data, in degrees and metres as
 * given (so EWKT output repeats the numbers sent), validated on
 * construction. Polygons are kept as convex rings in a canonical order
 * (convex.ts), CHULL already reduced to its hull: two spellings of one shape
 * are one value. A POLYGON of several rings is their exclusive or, Xapiand's
 * reading (a ring inside another is a hole).
 */
import { geoErrors } from './errors.js';
import { type Vec3, normalize, toVector } from './vector.js';

export interface GeoPoint {
  readonly lon: number;
  readonly lat: number;
  /** Metres above the sphere; kept and written back, ignored by geometry (a direction is a direction). */
  readonly height?: number;
}

export interface GeoCircle {
  readonly center: GeoPoint;
  /** Metres along the surface. */
  readonly radius: number;
}

export type Geometry =
  | { readonly kind: 'point'; readonly point: GeoPoint }
  | { readonly kind: 'circle'; readonly circle: GeoCircle }
  /** The intersection of circles (Xapiand's CONVEX). */
  | { readonly kind: 'convex'; readonly circles: readonly GeoCircle[] }
  /** Convex rings, exclusive-or'ed. */
  | { readonly kind: 'polygon'; readonly rings: ReadonlyArray<readonly GeoPoint[]> }
  | { readonly kind: 'multipoint'; readonly points: readonly GeoPoint[] }
  | { readonly kind: 'multicircle'; readonly circles: readonly GeoCircle[] }
  | { readonly kind: 'multiconvex'; readonly convexes: ReadonlyArray<readonly GeoCircle[]> }
  | { readonly kind: 'multipolygon'; readonly polygons: ReadonlyArray<ReadonlyArray<readonly GeoPoint[]>> }
  /** The union of its members; empty for `… EMPTY`. */
  | { readonly kind: 'collection'; readonly geometries: readonly Geometry[] };

/** Points (vertices, centres) one geometry may hold: bounds parsing, hulls and trixel coverings. */
export const GEOMETRY_POINTS_MAX = 100_000;
/** Nesting of GEOMETRYCOLLECTIONs. */
export const GEOMETRY_DEPTH_MAX = 16;

/** Counts the points of one geometry while it is parsed; 400 past GEOMETRY_POINTS_MAX. */
export class PointBudget {
  private used = 0;

  take(n = 1): void {
    this.used += n;
    if (this.used > GEOMETRY_POINTS_MAX) throw geoErrors.invalid(`A geometry may hold at most ${GEOMETRY_POINTS_MAX} points`);
  }
}

/** A point from degrees (latitude in [-90, 90], longitude in [-180, 180]) and an optional height in metres. */
export function makePoint(lat: unknown, lon: unknown, height?: unknown): GeoPoint {
  if (typeof lat !== 'number' || !Number.isFinite(lat) || lat < -90 || lat > 90) {
    throw geoErrors.invalid(`Invalid latitude ${describe(lat)}: expected a number of degrees from -90 to 90`);
  }
  if (typeof lon !== 'number' || !Number.isFinite(lon) || lon < -180 || lon > 180) {
    throw geoErrors.invalid(`Invalid longitude ${describe(lon)}: expected a number of degrees from -180 to 180`);
  }
  if (height === undefined) return { lon: lon === 0 ? 0 : lon, lat: lat === 0 ? 0 : lat };
  if (typeof height !== 'number' || !Number.isFinite(height)) throw geoErrors.invalid(`Invalid height ${describe(height)}: expected a number of metres`);
  return { lon: lon === 0 ? 0 : lon, lat: lat === 0 ? 0 : lat, height: height === 0 ? 0 : height };
}

function describe(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v.slice(0, 60)) : String(v);
}

export function pointVector(p: GeoPoint): Vec3 {
  return toVector(p.lat, p.lon);
}

/**
 * The points standing for a geometry's parts: each point, each circle's
 * centre, each convex's and polygon's centroid. A document's geo value lies
 * inside a query shape when one of these does, and sorts by the nearest.
 */
export function centroidsOf(g: Geometry): Vec3[] {
  const out: Vec3[] = [];
  collectCentroids(g, out);
  return out;
}

function collectCentroids(g: Geometry, out: Vec3[]): void {
  switch (g.kind) {
    case 'point':
      out.push(pointVector(g.point));
      return;
    case 'circle':
      out.push(pointVector(g.circle.center));
      return;
    case 'convex':
      out.push(meanDirection(g.circles.map((c) => pointVector(c.center))));
      return;
    case 'polygon':
      out.push(ringCentroid(g.rings[0]!));
      return;
    case 'multipoint':
      for (const p of g.points) out.push(pointVector(p));
      return;
    case 'multicircle':
      for (const c of g.circles) out.push(pointVector(c.center));
      return;
    case 'multiconvex':
      for (const circles of g.convexes) out.push(meanDirection(circles.map((c) => pointVector(c.center))));
      return;
    case 'multipolygon':
      for (const rings of g.polygons) out.push(ringCentroid(rings[0]!));
      return;
    case 'collection':
      for (const member of g.geometries) collectCentroids(member, out);
      return;
  }
}

/** A convex ring's centroid: the normalised sum of its vertices (inside the ring: a positive combination of them). */
export function ringCentroid(ring: readonly GeoPoint[]): Vec3 {
  return meanDirection(ring.map(pointVector));
}

/** The normalised sum of unit vectors; the first one when they cancel out. */
export function meanDirection(vectors: readonly Vec3[]): Vec3 {
  let x = 0;
  let y = 0;
  let z = 0;
  for (const v of vectors) {
    x += v[0];
    y += v[1];
    z += v[2];
  }
  const n = Math.hypot(x, y, z);
  if (n < 1e-12) return vectors[0]!;
  return normalize([x, y, z]);
}

/** The centroid of the whole geometry (the mean direction of its parts' centroids); null when empty. */
export function centroidOf(g: Geometry): Vec3 | null {
  const parts = centroidsOf(g);
  return parts.length === 0 ? null : meanDirection(parts);
}
