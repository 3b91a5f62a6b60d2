/**
 * Prometheus metrics (API.md §12.3) from prom-client, one registry per
 * server: request and operation latencies as summaries, uptime, documents per
 * index (gathered from the shards at scrape time), open connections, and
 * prom-client's default process metrics (event-loop lag, heap, GC).
 */
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { observeSeries, WindowSummary, type Series } from './window-summary.js';

export interface MetricsSources {
  /** Live documents per index path. */
  documentsByIndex(): Promise<Map<string, number>>;
  /** Open HTTP connections. */
  connections(): number;
}

const PERCENTILES = [0.5, 0.9, 0.99];
/** Quantiles over the last this many observations of each label set (recent latency, bounded memory). */
const SUMMARY_WINDOW = 1024;
/** Label sets per summary: methods × statuses and operations are few; this bounds the rest. */
const SUMMARY_SERIES_MAX = 512;

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: WindowSummary<'method' | 'status'>;
  private readonly operations: WindowSummary<'operation'>;
  private readonly startedAt = process.hrtime.bigint();
  private sources: MetricsSources | undefined;
  /** Series handles by method, then status: a request observes without building label keys. */
  private readonly requestSeries = new Map<string, Array<Series | null>>();
  private readonly operationSeries = new Map<string, Series | null>();

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    this.requests = new WindowSummary('tessera_http_requests_seconds', 'HTTP requests answered by the coordinator, by method and status',
      ['method', 'status'], PERCENTILES, SUMMARY_WINDOW, SUMMARY_SERIES_MAX, this.registry);
    this.operations = new WindowSummary('tessera_operations_seconds', 'API operations (document.get, index.put, …) by operation',
      ['operation'], PERCENTILES, SUMMARY_WINDOW, SUMMARY_SERIES_MAX, this.registry);
    const startedAt = this.startedAt;
    new Gauge({
      name: 'tessera_uptime_seconds',
      help: 'Seconds since the server started',
      registers: [this.registry],
      collect() {
        this.set(Number(process.hrtime.bigint() - startedAt) / 1e9);
      },
    });
    const metrics = this;
    new Gauge({
      name: 'tessera_documents',
      help: 'Live documents per index',
      labelNames: ['index'],
      registers: [this.registry],
      async collect() {
        this.reset();
        const byIndex = await metrics.sources?.documentsByIndex().catch(() => undefined);
        if (byIndex) for (const [index, n] of byIndex) this.set({ index }, n);
      },
    });
    new Gauge({
      name: 'tessera_http_current_connections',
      help: 'Open HTTP connections',
      registers: [this.registry],
      collect() {
        this.set(metrics.sources?.connections() ?? 0);
      },
    });
  }

  /** Where scrape-time figures come from (set once the server is up). */
  attach(sources: MetricsSources): void {
    this.sources = sources;
  }

  observeRequest(method: string, status: number, seconds: number, operation: string | undefined): void {
    let byStatus = this.requestSeries.get(method);
    if (byStatus === undefined) this.requestSeries.set(method, byStatus = []);
    let series = byStatus[status];
    if (series === undefined) series = byStatus[status] = this.requests.seriesOf({ method, status: String(status) });
    if (series !== null) observeSeries(series, seconds);
    if (operation === undefined || status >= 500) return;
    let op = this.operationSeries.get(operation);
    if (op === undefined) this.operationSeries.set(operation, op = this.operations.seriesOf({ operation }));
    if (op !== null) observeSeries(op, seconds);
  }

  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
