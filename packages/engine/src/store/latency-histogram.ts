/**
 * Latency of LevelDB batch writes, as plain numbers the node hands to the
 * coordinator's `/:metrics` (which turns them into a Prometheus histogram at
 * scrape time): cumulative count and sum, and a count per fixed bucket. The
 * engine knows nothing of prom-client; observing is a few comparisons and
 * additions, once per batch (@tessera/documents' BucketHistogram).
 */
import { BucketHistogram, type HistogramSnapshot } from '@tessera/documents';

/**
 * Upper bounds of the buckets, seconds: a buffered batch takes tens of
 * microseconds to a millisecond, a synced one (fsync) about a millisecond on
 * SSDs to tens on disks; past a second something is wrong.
 */
export const COMMIT_SECONDS_BOUNDS: readonly number[] = Object.freeze([
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
]);

/** The figures of a LatencyHistogram, as a node reports them. */
export type LatencyHistogramSnapshot = HistogramSnapshot;

/** Batch-write latencies, seconds, in the buckets above. */
export class LatencyHistogram extends BucketHistogram {
  constructor(bounds: readonly number[] = COMMIT_SECONDS_BOUNDS) {
    super(bounds);
  }
}
