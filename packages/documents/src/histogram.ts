/**
 * Counts per fixed bucket, the one histogram of the project: the engine
 * observes its LevelDB batch latencies into it and reports the snapshot in a
 * node's figures; the coordinator observes request and RPC latencies into it
 * and exposes both at `/:metrics`. Observing is a few comparisons and
 * additions: no labels are built or hashed, buckets are cumulated only when
 * scraped.
 */

/** A histogram's figures: `counts[i]` observations ≤ `bounds[i]` (and above the previous bound), the last entry above every bound. */
export interface HistogramSnapshot {
  bounds: readonly number[];
  counts: number[];
  count: number;
  sum: number;
}

export class BucketHistogram {
  /** Observations per bucket (not cumulative): `counts[i]` ≤ bounds[i], the last one above every bound. */
  readonly counts: Float64Array;
  count = 0;
  sum = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    // Linear: 16 bounds at most, and most observations land in the first few.
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    this.counts[i]++;
    this.count++;
    this.sum += value;
  }

  reset(): void {
    this.counts.fill(0);
    this.count = 0;
    this.sum = 0;
  }

  snapshot(): HistogramSnapshot {
    return { bounds: this.bounds, counts: Array.from(this.counts), count: this.count, sum: this.sum };
  }
}
