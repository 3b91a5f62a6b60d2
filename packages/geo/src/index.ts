/**
 * @tessera/geo: the geospatial values of API.md §8.6 as pure functions —
 * parsing (EWKT, coordinate arrays, shape objects, distances with units),
 * canonical EWKT output, exact containment on the sphere, centroids and
 * great-circle distances, and the Hierarchical Triangular Mesh (a point's
 * trixel at a level; bounded coverings of shapes). No I/O, no engine.
 */
export { geoErrors } from './errors.js';
export { angle, chord2, cross, dot, EARTH_RADIUS_M, greatCircleDistance, normalize, toLatLon, toVector, type Vec3 } from './vector.js';
export { parseDistance } from './units.js';
export {
  centroidOf, centroidsOf, type GeoCircle, type GeoPoint, type Geometry, GEOMETRY_DEPTH_MAX, GEOMETRY_POINTS_MAX,
  makePoint, meanDirection, pointVector,
} from './geometry.js';
export { convexRing } from './convex.js';
export { formatEwkt, looksLikeEwkt, parseEwkt } from './ewkt.js';
export { GEO_SHAPE_KEYS, geoShapeKey, isCoordinateArray, parseGeoShape, parseGeoValue } from './objects.js';
export { type Region, regionOf } from './region.js';
export {
  ancestorTrixel, childCorners, type Corners, coverRegion, HTM_LEVEL_MAX, INSIDE, midpoint, OUTSIDE, PARTIAL,
  type Relation, type Trixel, trixelCorners, trixelIds, trixelLevel, trixelOf,
} from './htm.js';
