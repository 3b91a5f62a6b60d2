/**
 * Random shapes and points for the property tests: circles and convex hulls
 * (alone or in collections) as JSON geo values, and points near a shape
 * (about half inside) or anywhere.
 */
import fc from 'fast-check';
import { centroidOf, type Geometry } from './geometry.js';
import { parseGeoValue } from './objects.js';

const RAD = Math.PI / 180;

const lat = fc.double({ min: -89.5, max: 89.5, noNaN: true });
const lon = fc.double({ min: -180, max: 180, noNaN: true });
const radius = fc.double({ min: 1, max: 3_000_000, noNaN: true });

/** A circle, or the hull of 3–8 points within a few degrees of a centre, as a JSON geo value. */
export const arbShape = fc.oneof(
  fc.record({ lat, lon, r: radius }).map(({ lat, lon, r }) => ({ _circle: { _latitude: lat, _longitude: lon, _radius: r } })),
  fc.record({
    lat: fc.double({ min: -80, max: 80, noNaN: true }), lon, spread: fc.double({ min: 0.01, max: 20, noNaN: true }),
    offsets: fc.array(fc.tuple(fc.double({ min: -1, max: 1, noNaN: true }), fc.double({ min: -1, max: 1, noNaN: true })), { minLength: 3, maxLength: 8 }),
  }).map(({ lat, lon, spread, offsets }) => ({
    _chull: {
      _latitude: offsets.map(([dy]) => Math.max(-89, Math.min(89, lat + dy * spread))),
      _longitude: offsets.map(([, dx]) => ((lon + dx * spread + 540) % 360) - 180),
    },
  })),
);

/** A shape, or a few of them as a collection; null when the random points made no valid hull. */
export function geometryOf(values: readonly unknown[]): Geometry | null {
  try {
    return values.length === 1 ? parseGeoValue(values[0]) : parseGeoValue({ _geometrycollection: values });
  } catch {
    return null;
  }
}

/** Points near a shape's centroid (about half inside) and anywhere. */
export function arbPointsFor(g: Geometry): fc.Arbitrary<Array<[number, number]>> {
  const c = centroidOf(g)!;
  const cLat = Math.asin(c[2]) / RAD;
  const cLon = Math.atan2(c[1], c[0]) / RAD;
  const near = fc.tuple(fc.double({ min: -15, max: 15, noNaN: true }), fc.double({ min: -15, max: 15, noNaN: true }))
    .map(([dy, dx]): [number, number] => [Math.max(-90, Math.min(90, cLat + dy)), ((cLon + dx + 540) % 360) - 180]);
  return fc.array(fc.oneof(near, fc.tuple(lat, lon)), { minLength: 1, maxLength: 40 });
}


/**
 * Points inside a shape's parts (circles and rings of a collection): a
 * random bearing and fraction of the radius from a circle's centre, a random
 * positive combination of a convex ring's vertices. Covering tests need
 * many points inside shapes of every size, which uniform sampling misses.
 */
export function arbInsidePoints(g: Geometry): fc.Arbitrary<Array<[number, number]>> {
  const parts: Geometry[] = g.kind === 'collection' ? [...g.geometries] : [g];
  const one = fc.tuple(fc.nat({ max: parts.length - 1 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 8, maxLength: 8 }))
    .map(([which, r]): [number, number] | null => {
      const part = parts[which]!;
      if (part.kind === 'circle') {
        const { center, radius } = part.circle;
        return destination(center.lat, center.lon, r[0]! * 360, r[1]! * 0.999 * radius);
      }
      if (part.kind === 'polygon') {
        const ring = part.rings[0]!;
        let x = 0;
        let y = 0;
        let z = 0;
        ring.forEach((p, i) => {
          const w = r[i % r.length]! + 1e-3;
          const la = p.lat * RAD;
          const lo = p.lon * RAD;
          x += w * Math.cos(la) * Math.cos(lo);
          y += w * Math.cos(la) * Math.sin(lo);
          z += w * Math.sin(la);
        });
        return [Math.atan2(z, Math.hypot(x, y)) / RAD, Math.atan2(y, x) / RAD];
      }
      return null;
    })
    .filter((p): p is [number, number] => p !== null);
  return fc.array(one, { minLength: 1, maxLength: 30 });
}

/** The point `distance` metres from (lat, lon) along `bearing` degrees. */
function destination(lat: number, lon: number, bearing: number, distance: number): [number, number] {
  const d = distance / 6_371_008.8;
  const phi = lat * RAD;
  const theta = bearing * RAD;
  const phi2 = Math.asin(Math.sin(phi) * Math.cos(d) + Math.cos(phi) * Math.sin(d) * Math.cos(theta));
  const lambda2 = lon * RAD + Math.atan2(Math.sin(theta) * Math.sin(d) * Math.cos(phi), Math.cos(d) - Math.sin(phi) * Math.sin(phi2));
  return [phi2 / RAD, ((lambda2 / RAD + 540) % 360) - 180];
}
