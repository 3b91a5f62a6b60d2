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
 * parts added. The coordinator's aggregations.ts keeps its own copy of
 * `addExact` (it cannot import the engine) plus the rounding.
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
  const p = x * x;
  const c = SPLITTER * x;
  if (!Number.isFinite(c) || !Number.isFinite(p)) {
    addExact(partials, p);
    return;
  }
  const hi = c - (c - x);
  const lo = x - hi;
  const e = lo * lo - (((p - hi * hi) - hi * lo) - hi * lo);
  addExact(partials, p);
  if (e !== 0) addExact(partials, e);
}
