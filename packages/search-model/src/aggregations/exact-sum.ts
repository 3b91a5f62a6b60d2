/**
 * Exact sums of doubles, so that a sum (and an average or a variance built
 * on it) does not depend on how documents are split among shards or
 * segments: floating-point addition is not associative, and an average over
 * five shards must equal the one-shard answer to the last bit.
 *
 * A sum is kept as non-overlapping partials in increasing magnitude whose
 * exact sum is the exact sum of everything added (Shewchuk's algorithm, as
 * Python's `math.fsum`). Partials of different shards add into one list the
 * same way, and the coordinator rounds the list once (correctly) at the end.
 * In practice the list holds 1–3 numbers.
 *
 * Squares are added exactly too: x² = p + e exactly (Dekker's product), both
 * parts added. Shards add into partials (the engine's metric collector);
 * the coordinator merges them and rounds once (merge.ts).
 */

/** Add `x` to the exact sum held in `partials` (in place). */
export function addExact(partials: number[], x: number): void {
  const n = partials.length;
  // Once the sum overflowed it stays ±Infinity (or NaN): plain addition from then on.
  if (n === 1 && !Number.isFinite(partials[0]!)) {
    partials[0] = partials[0]! + x;
    return;
  }
  let used = 0;
  for (let j = 0; j < n; j++) {
    let y = partials[j]!;
    if (Math.abs(x) < Math.abs(y)) {
      const t = x;
      x = y;
      y = t;
    }
    const hi = x + y;
    if (!Number.isFinite(hi)) {
      partials.length = 1;
      partials[0] = hi;
      return;
    }
    const lo = y - (hi - x);
    if (lo !== 0) partials[used++] = lo;
    x = hi;
  }
  // A zero on top (everything cancelled) is dropped unless it is the whole sum.
  if (x !== 0 || used === 0) partials[used++] = x;
  partials.length = used;
}

/** Dekker's splitter for doubles: 2^27 + 1. */
const SPLITTER = 134217729;

/** Add `x²` exactly to `partials`. */
export function addSquareExact(partials: number[], x: number): void {
  addProduct(partials, x, x, 1);
}

/** Add sign × a × b exactly (Dekker's product: a·b = p + e). */
export function addProduct(partials: number[], a: number, b: number, sign: 1 | -1): void {
  const p = a * b;
  const ca = SPLITTER * a;
  const cb = SPLITTER * b;
  if (!Number.isFinite(p) || !Number.isFinite(ca) || !Number.isFinite(cb)) {
    addExact(partials, sign * p);
    return;
  }
  const ah = ca - (ca - a);
  const al = a - ah;
  const bh = cb - (cb - b);
  const bl = b - bh;
  const e = al * bl - (((p - ah * bh) - al * bh) - ah * bl);
  addExact(partials, sign * p);
  if (e !== 0) addExact(partials, sign * e);
}

/** The correctly rounded value of an exact sum's partials (CPython's `math.fsum` final step). */
export function roundExact(partials: readonly number[]): number {
  let n = partials.length;
  if (n === 0) return 0;
  let hi = partials[--n]!;
  if (!Number.isFinite(hi)) return hi;
  let lo = 0;
  while (n > 0) {
    const x = hi;
    const y = partials[--n]!;
    hi = x + y;
    const yr = hi - x;
    lo = y - yr;
    if (lo !== 0) break;
  }
  // Half-way case: the rest of the partials decide the rounding direction.
  if (n > 0 && ((lo < 0 && partials[n - 1]! < 0) || (lo > 0 && partials[n - 1]! > 0))) {
    const y = lo * 2;
    const x = hi + y;
    const yr = x - hi;
    if (y === yr) hi = x;
  }
  return hi === 0 ? 0 : hi;
}
