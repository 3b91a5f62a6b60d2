/**
 * The Hierarchical Triangular Mesh (Kunszt, Szalay, Thakar: "The
 * Hierarchical Triangular Mesh"; Xapiand's htm.cc): the octahedron's eight
 * faces projected on the sphere are the level-0 trixels S0–S3 (ids 8–11)
 * and N0–N3 (ids 12–15); each trixel (v0, v1, v2) splits at its edges'
 * midpoints w0 = mid(v1, v2), w1 = mid(v0, v2), w2 = mid(v0, v1) into
 * children 0 (v0, w2, w1), 1 (v1, w0, w2), 2 (v2, w1, w0) and 3 (w0, w1, w2),
 * with id = parent id · 4 + child. A level-L id has 4 + 2L bits, so its
 * ancestor at level l is `id >> 2(L − l)`. Ids are bigints: level 25 needs
 * 54 bits. Corners run counter-clockwise seen from outside (the interior is
 * on the positive side of each `corner_i × corner_i+1`).
 */
import type { Region } from './region.js';
import { type Vec3 } from './vector.js';

/** Deepest level (API.md §8.2 `_accuracy` for geo: levels 0–25; a level-25 trixel is ~30 cm across). */
export const HTM_LEVEL_MAX = 25;

export type Corners = readonly [Vec3, Vec3, Vec3];

/** A trixel of a covering: its level and id. */
export interface Trixel {
  readonly level: number;
  readonly id: bigint;
}

const V0: Vec3 = [0, 0, 1];
const V1: Vec3 = [1, 0, 0];
const V2: Vec3 = [0, 1, 0];
const V3: Vec3 = [-1, 0, 0];
const V4: Vec3 = [0, -1, 0];
const V5: Vec3 = [0, 0, -1];

/** Corners of the level-0 trixels by id − 8: S0 S1 S2 S3 N0 N1 N2 N3. */
const ROOTS: readonly Corners[] = [
  [V1, V5, V2], [V2, V5, V3], [V3, V5, V4], [V4, V5, V1],
  [V1, V0, V4], [V4, V0, V3], [V3, V0, V2], [V2, V0, V1],
];

/** The level-0 trixel (id − 8) holding `p`: the octant of its coordinate signs (exact, no rounding). */
function rootOf(p: Vec3): number {
  const [x, y, z] = p;
  const north = z >= 0;
  if (x > 0 && y >= 0) return north ? 7 : 0;
  if (x <= 0 && y > 0) return north ? 6 : 1;
  if (x < 0 && y <= 0) return north ? 5 : 2;
  if (x >= 0 && y < 0) return north ? 4 : 3;
  return north ? 7 : 0; // the poles
}

/**
 * Normalised a + b. Every descent and every covering computes trixel
 * corners with this one function, so a point's trixel and a covering's
 * tests see the very same corners.
 */
export function midpoint(a: Vec3, b: Vec3): Vec3 {
  const x = a[0] + b[0];
  const y = a[1] + b[1];
  const z = a[2] + b[2];
  // Math.sqrt, not Math.hypot: several times faster, and these sums never overflow.
  const n = Math.sqrt(x * x + y * y + z * z);
  return [x / n, y / n, z / n];
}

export function childCorners(c: Corners, child: number): Corners {
  const [v0, v1, v2] = c;
  const w0 = midpoint(v1, v2);
  const w1 = midpoint(v0, v2);
  const w2 = midpoint(v0, v1);
  switch (child) {
    case 0: return [v0, w2, w1];
    case 1: return [v1, w0, w2];
    case 2: return [v2, w1, w0];
    default: return [w0, w1, w2];
  }
}

function tripleProduct(a: Vec3, b: Vec3, p: Vec3): number {
  return (a[1] * b[2] - a[2] * b[1]) * p[0] + (a[2] * b[0] - a[0] * b[2]) * p[1] + (a[0] * b[1] - a[1] * b[0]) * p[2];
}

/**
 * The child of trixel `c` holding `p` (a point of `c`): corner child k when
 * `p` lies on its corner's side of the midpoint edge that cuts it off (at
 * most one does, up to rounding: the one most clearly so wins), else the
 * middle child 3. The chosen child holds `p` as well as rounding allows, so
 * a covering that tests trixels with a small slack finds it.
 */
function childOf(c: Corners, p: Vec3): { child: number; corners: Corners } {
  const [v0, v1, v2] = c;
  const w0 = midpoint(v1, v2);
  const w1 = midpoint(v0, v2);
  const w2 = midpoint(v0, v1);
  const d0 = tripleProduct(w2, w1, p);
  const d1 = tripleProduct(w0, w2, p);
  const d2 = tripleProduct(w1, w0, p);
  if (d0 > 0 && d0 >= d1 && d0 >= d2) return { child: 0, corners: [v0, w2, w1] };
  if (d1 > 0 && d1 >= d2) return { child: 1, corners: [v1, w0, w2] };
  if (d2 > 0) return { child: 2, corners: [v2, w1, w0] };
  return { child: 3, corners: [w0, w1, w2] };
}

function checkLevel(level: number): void {
  if (!Number.isInteger(level) || level < 0 || level > HTM_LEVEL_MAX) throw new RangeError(`HTM level must be an integer from 0 to ${HTM_LEVEL_MAX}: ${level}`);
}

/** The id of the level-`level` trixel holding the unit vector `p`. */
export function trixelOf(p: Vec3, level: number): bigint {
  return trixelIds(p, [level])[0]!;
}

/** The ids of the trixels holding `p` at each of `levels` (one descent to the deepest). */
export function trixelIds(p: Vec3, levels: readonly number[]): bigint[] {
  let deepest = 0;
  for (const level of levels) {
    checkLevel(level);
    if (level > deepest) deepest = level;
  }
  const root = rootOf(p);
  let corners = ROOTS[root]!;
  // Exact as a number up to level 24 (2^52); bigints only below that.
  let id = 8 + root;
  let big = 0n;
  const atLevel: bigint[] = [BigInt(id)];
  for (let level = 1; level <= deepest; level++) {
    const next = childOf(corners, p);
    corners = next.corners;
    if (level <= 24) {
      id = id * 4 + next.child;
      atLevel.push(BigInt(id));
    } else {
      big = (level === 25 ? BigInt(id) : big) * 4n + BigInt(next.child);
      atLevel.push(big);
    }
  }
  return levels.map((level) => atLevel[level]!);
}

/** The level of a trixel id (4 + 2·level bits). */
export function trixelLevel(id: bigint): number {
  const bits = id.toString(2).length;
  const level = (bits - 4) / 2;
  if (id < 8n || !Number.isInteger(level) || level > HTM_LEVEL_MAX) throw new RangeError(`Not a trixel id: ${id}`);
  return level;
}

/** The ancestor of trixel `id` (at `level`) at level `ancestorLevel` ≤ level. */
export function ancestorTrixel(id: bigint, level: number, ancestorLevel: number): bigint {
  return id >> BigInt(2 * (level - ancestorLevel));
}

/** The corners of a trixel. */
export function trixelCorners(id: bigint): Corners {
  const level = trixelLevel(id);
  let corners = ROOTS[Number(id >> BigInt(2 * level)) - 8]!;
  for (let l = level - 1; l >= 0; l--) corners = childCorners(corners, Number((id >> BigInt(2 * l)) & 3n));
  return corners;
}

/**
 * A covering of `region` by at most `maxTrixels` trixels (at least the 8
 * roots' worth): every point the region contains lies in one of them.
 * Breadth first: trixels the region certainly misses are dropped, those it
 * certainly contains are kept whole at their level, and the others are split
 * level by level down to `maxLevel` — stopping at the level where splitting
 * once more would exceed the budget (coarser trixels, fewer of them).
 */
export function coverRegion(region: Region, maxLevel: number, maxTrixels: number): Trixel[] {
  checkLevel(maxLevel);
  const out: Trixel[] = [];
  let frontier: Array<{ id: bigint; corners: Corners }> = [];
  ROOTS.forEach((corners, i) => {
    const c = region.classify(corners);
    if (c === INSIDE) out.push({ level: 0, id: BigInt(8 + i) });
    else if (c === PARTIAL) frontier.push({ id: BigInt(8 + i), corners });
  });
  let level = 0;
  while (level < maxLevel && frontier.length > 0) {
    const next: Array<{ id: bigint; corners: Corners }> = [];
    const inside: Trixel[] = [];
    for (const t of frontier) {
      for (let k = 0; k < 4; k++) {
        const corners = childCorners(t.corners, k);
        const c = region.classify(corners);
        if (c === OUTSIDE) continue;
        const id = t.id * 4n + BigInt(k);
        if (c === INSIDE) inside.push({ level: level + 1, id });
        else next.push({ id, corners });
      }
    }
    if (out.length + inside.length + next.length > maxTrixels) break;
    out.push(...inside);
    frontier = next;
    level++;
  }
  for (const t of frontier) out.push({ level, id: t.id });
  return out;
}

/** Region/trixel relations of `Region.classify`. */
export const OUTSIDE = 0;
export const PARTIAL = 1;
export const INSIDE = 2;
export type Relation = typeof OUTSIDE | typeof PARTIAL | typeof INSIDE;
