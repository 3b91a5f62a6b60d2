/**
 * Binary search in an ascending Uint32Array (docids by ordinal): the index of
 * `value` within [lo, hi] (inclusive), or −1 when it is absent.
 */
export function indexOfSorted(array: Uint32Array, value: number, lo: number, hi: number): number {
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = array[mid]!;
    if (v < value) lo = mid + 1;
    else if (v > value) hi = mid - 1;
    else return mid;
  }
  return -1;
}
