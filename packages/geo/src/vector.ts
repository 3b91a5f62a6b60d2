/**
 * Points on the sphere as unit vectors (x towards lon 0 lat 0, y towards lon
 * 90, z towards the north pole): containment and distances become dot and
 * cross products, with no special cases at the antimeridian or the poles.
 * API.md §8.6 fixes the sphere radius at 6,371,008.8 m (the IUGG mean radius).
 */

/** Mean Earth radius in metres (API.md §8.6). */
export const EARTH_RADIUS_M = 6_371_008.8;

/** A unit vector. Plain tuples: geometry code reads them in tight loops. */
export type Vec3 = readonly [number, number, number];

const RAD = Math.PI / 180;

/** The unit vector of a latitude and longitude in degrees. */
export function toVector(lat: number, lon: number): Vec3 {
  const phi = lat * RAD;
  const lambda = lon * RAD;
  const c = Math.cos(phi);
  return [c * Math.cos(lambda), c * Math.sin(lambda), Math.sin(phi)];
}

/** Latitude and longitude in degrees of a (not necessarily unit) vector. */
export function toLatLon(v: Vec3): { lat: number; lon: number } {
  const lat = Math.atan2(v[2], Math.hypot(v[0], v[1])) / RAD;
  const lon = Math.atan2(v[1], v[0]) / RAD;
  return { lat, lon: lon === 0 ? 0 : lon };
}

export function dot(a: Vec3, b: Vec3): number {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

export function cross(a: Vec3, b: Vec3): Vec3 {
  return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
}

/** `v / |v|`; the zero vector stays zero (callers check degenerate input before). */
export function normalize(v: Vec3): Vec3 {
  const n = Math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  return n === 0 ? [0, 0, 0] : [v[0] / n, v[1] / n, v[2] / n];
}

/**
 * Angle in radians between two unit vectors: atan2(|a×b|, a·b), accurate
 * for tiny and near-antipodal angles alike (acos of the dot product loses
 * half its digits near 0).
 */
export function angle(a: Vec3, b: Vec3): number {
  const cx = a[1] * b[2] - a[2] * b[1];
  const cy = a[2] * b[0] - a[0] * b[2];
  const cz = a[0] * b[1] - a[1] * b[0];
  return Math.atan2(Math.hypot(cx, cy, cz), a[0] * b[0] + a[1] * b[1] + a[2] * b[2]);
}

/** Squared chord length between two unit vectors: 4·sin²(angle/2), exact for small angles. */
export function chord2(a: Vec3, b: Vec3): number {
  const dx = a[0] - b[0];
  const dy = a[1] - b[1];
  const dz = a[2] - b[2];
  return dx * dx + dy * dy + dz * dz;
}

/** Great-circle distance in metres between two points given in degrees. */
export function greatCircleDistance(lat1: number, lon1: number, lat2: number, lon2: number): number {
  return angle(toVector(lat1, lon1), toVector(lat2, lon2)) * EARTH_RADIUS_M;
}
