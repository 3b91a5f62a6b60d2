/**
 * Geo values as JSON (API.md §8.6): EWKT strings, `[lon, lat]` / `[lon, lat,
 * h]` arrays, and objects keyed by one geometry:
 *
 * | key | body |
 * |---|---|
 * | `_point` | `{_latitude, _longitude, _height?}` |
 * | `_circle` | `{_latitude, _longitude, _radius, _height?}` |
 * | `_convex` | `{_latitude: […], _longitude: […], _radius: r or […]}` (intersection of the circles) |
 * | `_polygon`, `_chull` | `{_latitude: […], _longitude: […]}`, or arrays of arrays for several rings |
 * | `_multipoint` | `{_latitude: […], _longitude: […]}` |
 * | `_multicircle` | `{_latitude: […], _longitude: […], _radius: r or […]}` |
 * | `_multiconvex` | `[convex body, …]` |
 * | `_multipolygon`, `_multichull` | `[polygon body or {"_polygon"|"_chull": body}, …]` |
 * | `_geometrycollection` | `[geo value, …]` |
 * | `_ewkt` | EWKT string |
 *
 * `_lat`/`_lng` spell `_latitude`/`_longitude` (Xapiand's short forms).
 * Coordinates are numbers: DMS or decimal-degree text is a 400.
 */
import { isPlainObject } from '@tessera/documents';
import { convexRing } from './convex.js';
import { geoErrors } from './errors.js';
import { parseEwkt } from './ewkt.js';
import {
  type GeoCircle, type GeoPoint, type Geometry, GEOMETRY_DEPTH_MAX, makePoint, PointBudget,
} from './geometry.js';
import { parseDistance } from './units.js';

/** Keys that make an object a geo value. */
export const GEO_SHAPE_KEYS: ReadonlySet<string> = new Set([
  '_point', '_circle', '_convex', '_polygon', '_chull', '_multipoint', '_multicircle', '_multiconvex',
  '_multipolygon', '_multichull', '_geometrycollection', '_ewkt',
]);

const LATITUDE_KEYS = new Set(['_latitude', '_lat']);
const LONGITUDE_KEYS = new Set(['_longitude', '_lng']);


/**
 * `[lon, lat]` or `[lon, lat, h]` of finite numbers with the longitude in
 * [-180, 180] and the latitude in [-90, 90]: an array API.md §8.1 detects
 * as one geo point rather than as numbers.
 */
export function isCoordinateArray(value: unknown): value is number[] {
  if (!Array.isArray(value) || value.length < 2 || value.length > 3) return false;
  for (const v of value) if (typeof v !== 'number' || !Number.isFinite(v)) return false;
  const lon = value[0] as number;
  const lat = value[1] as number;
  return lon >= -180 && lon <= 180 && lat >= -90 && lat <= 90;
}

/** The geometry key of an object value (`_point`…), or undefined when it has none. */
export function geoShapeKey(value: Record<string, unknown>): string | undefined {
  for (const key of Object.keys(value)) if (GEO_SHAPE_KEYS.has(key)) return key;
  return undefined;
}

/** Any geo value of API.md §8.6 (EWKT string, coordinate array, shape object) → a geometry; 400 otherwise. */
export function parseGeoValue(value: unknown): Geometry {
  return new GeoValueParser().value(value, 0);
}

/** One geometry key and its body (`"_circle", {…}`) → a geometry. */
export function parseGeoShape(key: string, body: unknown): Geometry {
  return new GeoValueParser().shape(key, body, 0);
}

class GeoValueParser {
  private readonly budget = new PointBudget();

  value(value: unknown, depth: number): Geometry {
    if (typeof value === 'string') return parseEwkt(value);
    if (Array.isArray(value)) {
      if (!isCoordinateArray(value)) {
        throw geoErrors.invalid('Invalid geo array: expected [longitude, latitude] or [longitude, latitude, height] in degrees and metres');
      }
      this.budget.take();
      return { kind: 'point', point: makePoint(value[1], value[0], value[2]) };
    }
    if (isPlainObject(value)) {
      const keys = Object.keys(value);
      const key = geoShapeKey(value);
      if (key === undefined) throw geoErrors.invalid(`Invalid geo value: expected one of ${[...GEO_SHAPE_KEYS].join(', ')}`);
      for (const other of keys) {
        if (other !== key) throw geoErrors.invalid(`Invalid geo value: '${other.slice(0, 40)}' beside '${key}' (one geometry per value)`);
      }
      return this.shape(key, value[key], depth);
    }
    throw geoErrors.invalid('Invalid geo value: expected an EWKT string, [longitude, latitude] or a geometry object');
  }

  shape(key: string, body: unknown, depth: number): Geometry {
    if (depth > GEOMETRY_DEPTH_MAX) throw geoErrors.invalid(`At most ${GEOMETRY_DEPTH_MAX} nested geometry collections`);
    switch (key) {
      case '_ewkt':
        if (typeof body !== 'string') throw geoErrors.invalid('_ewkt must be a string');
        return parseEwkt(body);
      case '_point': {
        const f = this.fields(key, body, ['_height']);
        this.budget.take();
        return { kind: 'point', point: makePoint(f.lat, f.lon, f.extra._height) };
      }
      case '_circle': {
        const f = this.fields(key, body, ['_height', '_radius']);
        this.budget.take();
        return { kind: 'circle', circle: { center: makePoint(f.lat, f.lon, f.extra._height), radius: radius(key, f.extra._radius) } };
      }
      case '_convex':
        return { kind: 'convex', circles: this.circles(key, body) };
      case '_multicircle':
        return { kind: 'multicircle', circles: this.circles(key, body) };
      case '_multipoint': {
        const f = this.fields(key, body, ['_height']);
        return { kind: 'multipoint', points: this.points(key, f.lat, f.lon, f.extra._height) };
      }
      case '_polygon':
      case '_chull':
        return { kind: 'polygon', rings: this.rings(key, body, key === '_chull') };
      case '_multiconvex':
        return { kind: 'multiconvex', convexes: this.array(key, body).map((item) => this.circles(key, item)) };
      case '_multipolygon':
      case '_multichull':
        return { kind: 'multipolygon', polygons: this.array(key, body).map((item) => this.polygonItem(key, item, key === '_multichull')) };
      case '_geometrycollection':
        return { kind: 'collection', geometries: this.array(key, body).map((item) => this.value(item, depth + 1)) };
      default:
        throw geoErrors.invalid(`Unknown geometry '${key.slice(0, 40)}'`);
    }
  }

  /** A shape body: latitude and longitude (either spelling) plus the `allowed` extra keys; anything else is a 400. */
  private fields(key: string, body: unknown, allowed: readonly string[]): { lat: unknown; lon: unknown; extra: Record<string, unknown> } {
    if (!isPlainObject(body)) throw geoErrors.invalid(`${key} must be an object with _latitude and _longitude`);
    let lat: unknown;
    let lon: unknown;
    const extra: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(body)) {
      if (LATITUDE_KEYS.has(k)) lat = v;
      else if (LONGITUDE_KEYS.has(k)) lon = v;
      else if (allowed.includes(k)) extra[k] = v;
      else throw geoErrors.invalid(`'${k.slice(0, 40)}' is not a key of ${key}`);
    }
    if (lat === undefined || lon === undefined) throw geoErrors.invalid(`${key} must contain _latitude and _longitude`);
    if (allowed.includes('_radius') && extra._radius === undefined) throw geoErrors.invalid(`${key} must contain _radius`);
    return { lat, lon, extra };
  }

  private array(key: string, body: unknown): unknown[] {
    if (!Array.isArray(body) || body.length === 0) throw geoErrors.invalid(`${key} must be a non-empty array`);
    return body;
  }

  /** Parallel arrays of latitudes, longitudes and optional heights → points. */
  private points(key: string, lat: unknown, lon: unknown, height: unknown): GeoPoint[] {
    if (!Array.isArray(lat) || !Array.isArray(lon) || lat.length === 0) throw geoErrors.invalid(`${key}: _latitude and _longitude must be non-empty arrays of numbers`);
    if (lat.length !== lon.length) throw geoErrors.invalid(`${key}: _latitude and _longitude must have the same length`);
    if (height !== undefined && (!Array.isArray(height) || height.length !== lat.length)) {
      throw geoErrors.invalid(`${key}: _height must be an array as long as _latitude`);
    }
    this.budget.take(lat.length);
    return lat.map((la, i) => makePoint(la, lon[i], height === undefined ? undefined : (height as unknown[])[i]));
  }

  /** Circles from parallel arrays; `_radius` one distance for all or an array as long as the others. */
  private circles(key: string, body: unknown): GeoCircle[] {
    const f = this.fields(key, body, ['_height', '_radius']);
    const centers = this.points(key, f.lat, f.lon, f.extra._height);
    const r = f.extra._radius;
    if (Array.isArray(r) && r.length !== centers.length) throw geoErrors.invalid(`${key}: _radius must be one distance or an array as long as _latitude`);
    return centers.map((center, i) => ({ center, radius: radius(key, Array.isArray(r) ? r[i] : r) }));
  }

  /** `{_latitude: […], _longitude: […]}` (one ring) or arrays of arrays (several rings). */
  private rings(key: string, body: unknown, hull: boolean): GeoPoint[][] {
    const f = this.fields(key, body, []);
    const what = hull ? 'CHULL ring' : 'POLYGON ring';
    const lat = f.lat;
    const lon = f.lon;
    if (!Array.isArray(lat) || !Array.isArray(lon)) throw geoErrors.invalid(`${key}: _latitude and _longitude must be arrays`);
    if (lat.length > 0 && Array.isArray(lat[0])) {
      if (lat.length !== lon.length) throw geoErrors.invalid(`${key}: _latitude and _longitude must have the same length`);
      return lat.map((la, i) => convexRing(this.points(key, la, lon[i], undefined), hull, what));
    }
    return [convexRing(this.points(key, lat, lon, undefined), hull, what)];
  }

  /** An element of `_multipolygon`/`_multichull`: a bare body, or one keyed `_polygon`/`_chull`. */
  private polygonItem(key: string, item: unknown, hull: boolean): GeoPoint[][] {
    if (isPlainObject(item)) {
      const keys = Object.keys(item);
      if (keys.length === 1 && (keys[0] === '_polygon' || keys[0] === '_chull')) return this.rings(keys[0], item[keys[0]], keys[0] === '_chull');
    }
    return this.rings(key, item, hull);
  }
}

function radius(key: string, value: unknown): number {
  return parseDistance(value, `${key} radius`);
}
