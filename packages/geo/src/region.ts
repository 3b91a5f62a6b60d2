/**
 * Geometries compiled for testing: exact containment of a unit vector
 * (`contains`) and the relation to a trixel (`classify`) that HTM coverings
 * need. On the unit sphere a circle is a cap (inside ⇔ chord to the centre ≤
 * 2·sin(θ/2), θ = radius / R), a convex polygon the intersection of the
 * hemispheres left of its edges (inside ⇔ (vᵢ × vᵢ₊₁) · p ≥ 0 for every
 * edge), CONVEX the intersection of its caps, a POLYGON of several rings
 * their exclusive or, and MULTI* and collections unions.
 *
 * `classify` may answer PARTIAL for a trixel the region misses (a covering
 * is then merely larger) but never OUTSIDE for one it touches: its tests
 * keep a slack (TRIXEL_SLACK, in radians) well above the rounding of the
 * trixel corners, so a point that a descent put in a trixel is found by the
 * covering of any region containing it. INSIDE claims are exact tests.
 */
import { type Corners, INSIDE, OUTSIDE, PARTIAL, type Relation } from './htm.js';
import { type GeoCircle, type GeoPoint, type Geometry, pointVector } from './geometry.js';
import { chord2, cross, dot, EARTH_RADIUS_M, normalize, type Vec3 } from './vector.js';

export interface Region {
  /** Whether the region holds the unit vector `p` (boundary included). */
  contains(p: Vec3): boolean;
  /** OUTSIDE only when the trixel certainly misses the region; INSIDE only when the region certainly holds all of it. */
  classify(corners: Corners): Relation;
}

/** Slack of trixel tests in radians (~0.6 mm on the Earth): far above the rounding of corners and normals. */
const TRIXEL_SLACK = 1e-10;
/** Separating-edge tests keep more: a trixel's offset corners move further than its edges. */
const SEPARATION_SLACK = 1e-9;
/** Two points closer than this chord² (about 0.6 mm apart) are one point. */
const SAME_POINT_CHORD2 = 1e-20;

export function regionOf(g: Geometry): Region {
  switch (g.kind) {
    case 'point':
      return new PointRegion(pointVector(g.point));
    case 'circle':
      return capOf(g.circle);
    case 'convex':
      return convexOf(g.circles);
    case 'polygon':
      return polygonOf(g.rings);
    case 'multipoint':
      return union(g.points.map((p) => new PointRegion(pointVector(p))));
    case 'multicircle':
      return union(g.circles.map(capOf));
    case 'multiconvex':
      return union(g.convexes.map(convexOf));
    case 'multipolygon':
      return union(g.polygons.map(polygonOf));
    case 'collection':
      return union(g.geometries.map(regionOf));
  }
}

function capOf(c: GeoCircle): Region {
  return new CapRegion(pointVector(c.center), c.radius / EARTH_RADIUS_M);
}

function convexOf(circles: readonly GeoCircle[]): Region {
  if (circles.length === 0) return EMPTY;
  return circles.length === 1 ? capOf(circles[0]!) : new IntersectionRegion(circles.map(capOf));
}

function polygonOf(rings: ReadonlyArray<readonly GeoPoint[]>): Region {
  const regions = rings.map((ring) => new ConvexPolygonRegion(ring.map(pointVector)));
  return regions.length === 1 ? regions[0]! : new XorRegion(regions);
}

function union(regions: Region[]): Region {
  if (regions.length === 0) return EMPTY;
  return regions.length === 1 ? regions[0]! : new UnionRegion(regions);
}

/** Unit normals of a trixel's edges (interior on the positive side). */
function edgeNormals(c: Corners): [Vec3, Vec3, Vec3] {
  return [normalize(cross(c[0], c[1])), normalize(cross(c[1], c[2])), normalize(cross(c[2], c[0]))];
}

/** Whether `p` lies in the trixel, give or take `slack` radians. */
function inTrixel(normals: readonly Vec3[], p: Vec3, slack: number): boolean {
  return dot(normals[0]!, p) >= -slack && dot(normals[1]!, p) >= -slack && dot(normals[2]!, p) >= -slack;
}

class PointRegion implements Region {
  constructor(private readonly point: Vec3) {}

  contains(p: Vec3): boolean {
    return chord2(p, this.point) <= SAME_POINT_CHORD2;
  }

  classify(c: Corners): Relation {
    return inTrixel(edgeNormals(c), this.point, TRIXEL_SLACK) ? PARTIAL : OUTSIDE;
  }
}

/**
 * A circle: the cap of angular radius `theta` about `center`. Trixel tests
 * stay in dot products (chords, sines) rather than angles: coverings run
 * thousands of them per query, and atan2 was most of their time.
 */
class CapRegion implements Region {
  /** Chord² of the radius: 4·sin²(θ/2); compared with chord² to the centre, exact for small circles. */
  private readonly limit: number;
  /** The same for the radius widened by TRIXEL_SLACK, and its sine (distance of a great circle). */
  private readonly widenedLimit: number;
  private readonly widenedSin: number;
  private readonly widenedPastQuarter: boolean;

  constructor(private readonly center: Vec3, private readonly theta: number) {
    this.limit = theta >= Math.PI ? Infinity : 4 * Math.sin(theta / 2) ** 2;
    const widened = theta + TRIXEL_SLACK;
    this.widenedLimit = widened >= Math.PI ? Infinity : 4 * Math.sin(widened / 2) ** 2;
    this.widenedSin = Math.sin(widened);
    this.widenedPastQuarter = widened >= Math.PI / 2;
  }

  contains(p: Vec3): boolean {
    return chord2(p, this.center) <= this.limit;
  }

  classify(c: Corners): Relation {
    if (this.theta >= Math.PI) return INSIDE;
    const in0 = this.contains(c[0]);
    const in1 = this.contains(c[1]);
    const in2 = this.contains(c[2]);
    // A cap up to a hemisphere is convex: holding the corners, it holds the trixel.
    if (in0 && in1 && in2) return this.theta <= Math.PI / 2 ? INSIDE : PARTIAL;
    if (in0 || in1 || in2) return PARTIAL;
    const o = this.center;
    const limit = this.widenedLimit;
    if (chord2(c[0], o) <= limit || chord2(c[1], o) <= limit || chord2(c[2], o) <= limit) return PARTIAL;
    const normals = edgeNormals(c);
    if (inTrixel(normals, o, 0)) return PARTIAL;
    // No corner within reach and the centre outside: only an edge's inside can come near.
    for (let i = 0; i < 3; i++) {
      const n = normals[i]!;
      const s = dot(o, n);
      if (!this.widenedPastQuarter && Math.abs(s) > this.widenedSin) continue;
      if (nearestOnArc(o, s, c[i]!, c[(i + 1) % 3]!, n)) return PARTIAL;
    }
    return OUTSIDE;
  }
}

/** Whether the point of the great circle (unit normal `n`, `s` = o·n) nearest to `o` lies on the arc a→b. */
function nearestOnArc(o: Vec3, s: number, a: Vec3, b: Vec3, n: Vec3): boolean {
  const q: Vec3 = [o[0] - s * n[0], o[1] - s * n[1], o[2] - s * n[2]];
  return dot(cross(a, q), n) >= 0 && dot(cross(q, b), n) >= 0;
}

/** A convex ring, counter-clockwise: inside ⇔ on the left of (or on) every edge. */
class ConvexPolygonRegion implements Region {
  private readonly normals: Vec3[];

  constructor(private readonly vertices: readonly Vec3[]) {
    this.normals = vertices.map((v, i) => normalize(cross(v, vertices[(i + 1) % vertices.length]!)));
  }

  contains(p: Vec3): boolean {
    for (const n of this.normals) if (dot(n, p) < 0) return false;
    return true;
  }

  classify(c: Corners): Relation {
    if (this.contains(c[0]) && this.contains(c[1]) && this.contains(c[2])) return INSIDE;
    // Separating great circles: an edge of either with the other wholly beyond it.
    for (const n of this.normals) {
      if (dot(n, c[0]) < -SEPARATION_SLACK && dot(n, c[1]) < -SEPARATION_SLACK && dot(n, c[2]) < -SEPARATION_SLACK) return OUTSIDE;
    }
    for (const m of edgeNormals(c)) {
      let beyond = true;
      for (const v of this.vertices) {
        if (dot(m, v) >= -SEPARATION_SLACK) {
          beyond = false;
          break;
        }
      }
      if (beyond) return OUTSIDE;
    }
    return PARTIAL;
  }
}

class IntersectionRegion implements Region {
  constructor(private readonly parts: readonly Region[]) {}

  contains(p: Vec3): boolean {
    for (const r of this.parts) if (!r.contains(p)) return false;
    return true;
  }

  classify(c: Corners): Relation {
    let all = true;
    for (const r of this.parts) {
      const relation = r.classify(c);
      if (relation === OUTSIDE) return OUTSIDE;
      if (relation !== INSIDE) all = false;
    }
    return all ? INSIDE : PARTIAL;
  }
}

/** Rings exclusive-or'ed: inside an odd number of them. */
class XorRegion implements Region {
  constructor(private readonly parts: readonly Region[]) {}

  contains(p: Vec3): boolean {
    let inside = false;
    for (const r of this.parts) if (r.contains(p)) inside = !inside;
    return inside;
  }

  classify(c: Corners): Relation {
    let inside = 0;
    let partial = 0;
    for (const r of this.parts) {
      const relation = r.classify(c);
      if (relation === INSIDE) inside++;
      else if (relation === PARTIAL) partial++;
    }
    if (inside === 0 && partial === 0) return OUTSIDE;
    return inside === 1 && partial === 0 ? INSIDE : PARTIAL;
  }
}

class UnionRegion implements Region {
  constructor(private readonly parts: readonly Region[]) {}

  contains(p: Vec3): boolean {
    for (const r of this.parts) if (r.contains(p)) return true;
    return false;
  }

  classify(c: Corners): Relation {
    let relation: Relation = OUTSIDE;
    for (const r of this.parts) {
      const each = r.classify(c);
      if (each === INSIDE) return INSIDE;
      if (each === PARTIAL) relation = PARTIAL;
    }
    return relation;
  }
}

const EMPTY: Region = { contains: () => false, classify: () => OUTSIDE };
