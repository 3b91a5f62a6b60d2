/**
 * A Prometheus summary that costs almost nothing per observation: exact
 * `_count` and `_sum` per label set, and quantiles computed at scrape time
 * from the last `windowSize` observations kept in a ring of float64s.
 * prom-client's Summary feeds a t-digest on every observation, which
 * profiled at a quarter of a cached GET's time; scrapes are rare, requests
 * are not. Registered in a prom-client Registry like any other metric.
 */
import type { MetricValue, Registry } from 'prom-client';

export interface Series {
  labels: Record<string, string>;
  count: number;
  sum: number;
  ring: Float64Array;
  /** Next ring slot to write. */
  next: number;
}

export class WindowSummary<L extends string> {
  private readonly series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly L[],
    private readonly percentiles: readonly number[],
    private readonly windowSize: number,
    /** Label sets kept at most: client input must never grow memory without bound. */
    private readonly seriesMax: number,
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  observe(labels: Record<L, string>, value: number): void {
    const s = this.seriesOf(labels);
    if (s !== null) observeSeries(s, value);
  }

  /**
   * The series of one label set, to keep and feed with `observeSeries` on a
   * hot path (no label key is built per observation); null past seriesMax.
   */
  seriesOf(labels: Record<L, string>): Series | null {
    let key = '';
    for (const name of this.labelNames) key += `${labels[name]}\u0000`;
    let s = this.series.get(key);
    if (s === undefined) {
      if (this.series.size >= this.seriesMax) return null;
      s = { labels: { ...labels }, count: 0, sum: 0, ring: new Float64Array(this.windowSize), next: 0 };
      this.series.set(key, s);
    }
    return s;
  }

  /** prom-client's metric protocol: the values to expose at a scrape. */
  async get(): Promise<{ name: string; help: string; type: string; values: Array<MetricValue<string> & { metricName?: string }>; aggregator: string }> {
    const values: Array<MetricValue<string> & { metricName?: string }> = [];
    for (const s of this.series.values()) {
      const n = Math.min(s.count, this.windowSize);
      const window = Array.from(s.ring.subarray(0, n)).sort((a, b) => a - b);
      for (const q of this.percentiles) {
        const value = n === 0 ? 0 : (window[Math.min(n - 1, Math.floor(q * n))] as number);
        values.push({ labels: { ...s.labels, quantile: q }, value });
      }
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: 'summary', values, aggregator: 'sum' };
  }

  reset(): void {
    // Series handed out by seriesOf stay valid: they are zeroed, not dropped.
    for (const s of this.series.values()) {
      s.count = 0;
      s.sum = 0;
      s.next = 0;
      s.ring.fill(0);
    }
  }
}

export function observeSeries(s: Series, value: number): void {
  s.count++;
  s.sum += value;
  s.ring[s.next] = value;
  s.next = (s.next + 1) % s.ring.length;
}
