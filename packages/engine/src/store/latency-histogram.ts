/**
 * Latency of LevelDB batch writes, as plain numbers the node hands to the
 * coordinator's `/:metrics` (which turns them into a Prometheus histogram at
 * scrape time): cumulative count and sum, and a count per fixed bucket. The
 * engine knows nothing of prom-client; observing is a few comparisons and
 * additions, once per batch.
 */

/**
 * Upper bounds of the buckets, seconds: a buffered batch takes tens of
 * microseconds to a millisecond, a synced one (fsync) about a millisecond on
 * SSDs to tens on disks; past a second something is wrong.
 */
export const COMMIT_SECONDS_BOUNDS: readonly number[] = Object.freeze([
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
]);

/** A histogram's figures: `counts[i]` observations ≤ `bounds[i]` (and above the previous bound), the last entry above every bound. */
export interface LatencyHistogramSnapshot {
  bounds: readonly number[];
  counts: number[];
  count: number;
  sum: number;
}

export class LatencyHistogram {
  private readonly counts: Float64Array;
  private count = 0;
  private sum = 0;

  constructor(private readonly bounds: readonly number[] = COMMIT_SECONDS_BOUNDS) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(seconds: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && seconds > (bounds[i] as number)) i++;
    this.counts[i]++;
    this.count++;
    this.sum += seconds;
  }

  snapshot(): LatencyHistogramSnapshot {
    return { bounds: this.bounds, counts: Array.from(this.counts), count: this.count, sum: this.sum };
  }
}
