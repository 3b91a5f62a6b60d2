/**
 * A Prometheus histogram that costs a few comparisons per observation: each
 * label set's bucket counts are a Float64Array behind a series handle the
 * caller keeps (`seriesOf` once, `observeHistogram` per event), so no label
 * key is built or hashed on the request path — the same idea as
 * WindowSummary, for the same reason (prom-client hashes the labels of every
 * observation). Buckets are cumulated only at scrape time. Registered in a
 * prom-client Registry like any other metric.
 */
import { BucketHistogram } from '@tessera/documents';
import type { MetricValue, Registry } from 'prom-client';

/** One label set's buckets (@tessera/documents' BucketHistogram, the engine's too): keep it and `observe` into it. */
export class HistogramSeries extends BucketHistogram {
  constructor(readonly labels: Record<string, string>, bounds: readonly number[]) {
    super(bounds);
  }
}

/** Latency buckets, seconds, from a cached GET (tens of µs) to a slow search or a stuck disk (10 s). */
export const LATENCY_SECONDS_BUCKETS: readonly number[] = Object.freeze([
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
]);

export type MetricValues = Array<MetricValue<string> & { metricName?: string }>;

export interface MetricSnapshot {
  name: string;
  help: string;
  type: string;
  values: MetricValues;
  aggregator: string;
}

export class FixedHistogram<L extends string> {
  private readonly series = new Map<string, HistogramSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly L[],
    private readonly bounds: readonly number[],
    /** Label sets kept at most: client input must never grow memory without bound. */
    private readonly seriesMax: number,
    registry: Registry,
  ) {
    for (let i = 1; i < bounds.length; i++) {
      if (!((bounds[i] as number) > (bounds[i - 1] as number))) throw new Error(`${name}: bucket bounds must increase`);
    }
    registry.registerMetric(this as never);
  }

  /** The series of one label set, to keep and `observe` into; null past seriesMax. */
  seriesOf(labels: Record<L, string>): HistogramSeries | null {
    let key = '';
    for (const name of this.labelNames) key += `${labels[name]}\u0000`;
    let s = this.series.get(key);
    if (s === undefined) {
      if (this.series.size >= this.seriesMax) return null;
      s = new HistogramSeries({ ...labels }, this.bounds);
      this.series.set(key, s);
    }
    return s;
  }

  /** prom-client's metric protocol: the values to expose at a scrape. */
  async get(): Promise<MetricSnapshot> {
    const values: MetricValues = [];
    for (const s of this.series.values()) pushHistogramValues(values, this.name, s.labels, s.bounds, s.counts, s.count, s.sum);
    return { name: this.name, help: this.help, type: 'histogram', values, aggregator: 'sum' };
  }

  reset(): void {
    // Series handed out by seriesOf stay valid: they are zeroed, not dropped.
    for (const s of this.series.values()) s.reset();
  }
}

/**
 * A histogram's exposition values (`_bucket` per bound and `+Inf`,
 * cumulative; `_sum`; `_count`) from per-bucket counts, whether observed
 * here or reported by a shard node.
 */
export function pushHistogramValues(values: MetricValues, name: string, labels: Record<string, string>,
  bounds: readonly number[], counts: ArrayLike<number>, count: number, sum: number): void {
  let cumulative = 0;
  for (let i = 0; i < bounds.length; i++) {
    cumulative += counts[i] as number;
    values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: bounds[i] as number }, value: cumulative });
  }
  values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: count });
  values.push({ metricName: `${name}_sum`, labels, value: sum });
  values.push({ metricName: `${name}_count`, labels, value: count });
}

/** One series of a histogram gathered at scrape time (from shard nodes' figures). */
export interface CollectedSeries {
  labels: Record<string, string>;
  bounds: readonly number[];
  counts: ArrayLike<number>;
  count: number;
  sum: number;
}

/** A histogram whose series are gathered when scraped (not observed here); registered in a prom-client Registry. */
export class CollectedHistogram {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    private readonly collect: () => Promise<CollectedSeries[]>,
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  async get(): Promise<MetricSnapshot> {
    const values: MetricValues = [];
    for (const s of await this.collect()) pushHistogramValues(values, this.name, s.labels, s.bounds, s.counts, s.count, s.sum);
    return { name: this.name, help: this.help, type: 'histogram', values, aggregator: 'sum' };
  }

  /** Nothing to reset: the figures live on the nodes. */
  reset(): void {}
}
