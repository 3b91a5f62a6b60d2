/**
 * Prometheus metrics (API.md §12.3) from prom-client, one registry per
 * server: request and operation latencies as summaries, latency histograms
 * of HTTP requests, RPC calls and storage commits, uptime, documents and
 * bytes on disk per index (gathered from the shards at scrape time), the
 * shard copies' segment flushes and merges (and their failures), open
 * connections, and prom-client's default process metrics (event-loop lag,
 * heap, GC). docs/operations.md lists them all (a test keeps it in step).
 */
import type { NodeStatsReply, RpcClient } from '@tessera/rpc';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import {
  CollectedHistogram, FixedHistogram, LATENCY_SECONDS_BUCKETS, type CollectedSeries, type HistogramSeries,
} from './fixed-histogram.js';
import { TimedRpcClient } from './timed-rpc-client.js';
import type { ReplicationLag } from '../replication/replicator.js';
import type { AuthFailure } from '../auth/authorizer.js';
import { observeSeries, WindowSummary, type Series } from './window-summary.js';

export interface MetricsSources {
  /** Live documents per index path. */
  documentsByIndex(): Promise<Map<string, number>>;
  /** Open HTTP connections. */
  connections(): number;
  /** Request body bytes the HTTP connections hold (bounded by bodiesBytesMax). */
  bodyBytesHeld?(): number;
  /** Figures of every active node's open shard copies (bytes on disk, commit times). */
  nodeStats(): Promise<NodeStatsReply[]>;
  /** Log lines the process could not write (its standard output failed or fell behind); the process's logger counts them. */
  logLinesDropped?(): number;
}

/** One shard copy's figures in a node's stats. */
type CopyStats = NodeStatsReply['shards'][number];

/** The series a request observes: its summary (by status) and its histogram (by status class). */
interface RequestSeries {
  summary: Series | null;
  histogram: HistogramSeries | null;
}

const PERCENTILES = [0.5, 0.9, 0.99];
/** Quantiles over the last this many observations of each label set (recent latency, bounded memory). */
const SUMMARY_WINDOW = 1024;
/** Label sets per summary: methods × statuses and operations are few; this bounds the rest. */
const SUMMARY_SERIES_MAX = 512;
/** Label sets per histogram: methods × status classes, RPC methods. */
const HISTOGRAM_SERIES_MAX = 256;
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'];

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: WindowSummary<'method' | 'status'>;
  private readonly operations: WindowSummary<'operation'>;
  private readonly startedAt = process.hrtime.bigint();
  private sources: MetricsSources | undefined;
  /** Series handles by method, then status: a request observes without building label keys. */
  private readonly requestSeries = new Map<string, RequestSeries[]>();
  private readonly operationSeries = new Map<string, Series | null>();
  private readonly requestHistogram: FixedHistogram<'method' | 'status_class'>;
  private readonly rpcHistogram: FixedHistogram<'method'>;
  private readonly rpcSeries = new Map<string, HistogramSeries | null>();
  private readonly authFailures = new Counter({
    name: 'tessera_auth_failures_total',
    help: 'Requests refused by the API keys: missing (401, no Authorization), invalid (401, malformed or unknown key), expired (401), forbidden (403, outside the key\'s actions or indexes)',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  private readonly stateFences = new Counter({
    name: 'tessera_state_fences_total',
    help: 'Reads and direct writes on a coordinator that is not elected, by what made its cluster state current first: its lease from the elected coordinator (lease), the elected coordinator\'s revision over their connection (elected), or a read of etcd (etcd)',
    labelNames: ['via'],
    registers: [this.registry],
  });
  private readonly routedWrites = new Counter({
    name: 'tessera_routed_writes_total',
    help: 'Document writes on a coordinator that is not elected, by where they went: straight to the shard\'s primary, which relays them to its replicas itself (primary), or through the elected coordinator, which relays them (elected)',
    labelNames: ['via'],
    registers: [this.registry],
  });
  /** The nodes' figures, fetched once per scrape however many metrics use them. */
  private scrapeNodeStats: Promise<NodeStatsReply[]> | undefined;
  /** Where the replication lag comes from (the coordinator's replicator). */
  private replicationLag: (() => Promise<ReplicationLag[]>) | undefined;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    this.requests = new WindowSummary('tessera_http_requests_seconds', 'HTTP requests answered by the coordinator, by method and status',
      ['method', 'status'], PERCENTILES, SUMMARY_WINDOW, SUMMARY_SERIES_MAX, this.registry);
    this.operations = new WindowSummary('tessera_operations_seconds', 'API operations (document.get, index.put, …) by operation',
      ['operation'], PERCENTILES, SUMMARY_WINDOW, SUMMARY_SERIES_MAX, this.registry);
    this.requestHistogram = new FixedHistogram('tessera_http_request_duration_seconds',
      'HTTP requests answered by the coordinator, by method and status class', ['method', 'status_class'],
      LATENCY_SECONDS_BUCKETS, HISTOGRAM_SERIES_MAX, this.registry);
    this.rpcHistogram = new FixedHistogram('tessera_rpc_call_duration_seconds',
      'RPC calls from the coordinator to shard nodes, by method, as the coordinator waits for them', ['method'],
      LATENCY_SECONDS_BUCKETS, HISTOGRAM_SERIES_MAX, this.registry);
    new CollectedHistogram('tessera_storage_commit_duration_seconds',
      'LevelDB batch writes of the shard copies, by node and whether the batch was synced (fsync)', ['node', 'sync'],
      async () => commitSeries(await this.nodeStats()), this.registry);
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
    for (const [name, help, field] of [
      ['tessera_script_cache_hits_total', 'Script runs whose compiled chunk was in the cache, on every node', 'cacheHits'],
      ['tessera_script_cache_misses_total', 'Script runs that compiled their body (not cached, evicted or expired), on every node', 'cacheMisses'],
    ] as const) {
      new Counter({
        name,
        help,
        registers: [this.registry],
        async collect() {
          this.reset();
          let total = 0;
          for (const node of await metrics.nodeStats()) total += node.scripts?.[field] ?? 0;
          this.inc(total);
        },
      });
    }
    // Per node: the search index of its shard copies (ENGINE.md "Write path": flushes and merges), and their LevelDB
    // memory (engine store/store-memory.ts: held, memtables written out early, writes held back).
    const search = (field: 'flushes' | 'flushFailures' | 'merges' | 'mergeFailures' | 'writeHolds') => (node: NodeStatsReply) =>
      sumOverCopies(node, (copy) => copy.search?.[field] ?? 0);
    for (const [Kind, name, help, figure] of [
      [Counter, 'tessera_index_flushes_total', 'Write buffers the shard copies on a node flushed into segments, since each copy was opened', search('flushes')],
      [Counter, 'tessera_index_flush_failures_total', 'Segment flushes that failed on a node (each is logged and retried; while one keeps failing /readyz is 503)', search('flushFailures')],
      [Counter, 'tessera_index_merges_total', 'Segment merges the shard copies on a node completed, since each copy was opened', search('merges')],
      [Counter, 'tessera_index_merge_failures_total', 'Segment merges that failed on a node (each is logged and retried after the next flush)', search('mergeFailures')],
      [Counter, 'tessera_index_write_holds_total', 'Write batches on a node held back until a segment flush ended, because the shard copy\'s buffers held the changes a crash may leave to replay (twice writeBufferOps): flushes falling behind the writes', search('writeHolds')],
      [Gauge, 'tessera_store_memory_bytes', 'What the LevelDB databases of a node\'s shard copies hold in memory (their memtables, LevelDB\'s figure), bounded by storeMemoryBytesMax',
        (node: NodeStatsReply) => node.store?.bytes],
      [Counter, 'tessera_store_memtable_flushes_total', 'LevelDB memtables of a node\'s shard copies written out early: the databases together held more than storeMemoryBytesMax, or a copy stopped being written to',
        (node: NodeStatsReply) => node.store?.flushes],
      [Counter, 'tessera_store_write_stalls_total', 'Write batches on a node held back (up to 1 s) while its LevelDB databases held more than twice storeMemoryBytesMax, waiting for memtables to be written out',
        (node: NodeStatsReply) => node.store?.stalls],
    ] as const) {
      new Kind({
        name,
        help,
        labelNames: ['node'],
        registers: [this.registry],
        async collect() {
          this.reset();
          for (const node of await metrics.nodeStats()) {
            const value = figure(node);
            if (value === undefined) continue;
            if (this instanceof Gauge) this.set({ node: node.name }, value);
            else this.inc({ node: node.name }, value);
          }
        },
      });
    }
    new Gauge({
      name: 'tessera_index_flush_failing_copies',
      help: 'Shard copies on a node whose segment flush keeps failing: their write buffers stay in memory and their operation logs untrimmed',
      labelNames: ['node'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const node of await metrics.nodeStats()) this.set({ node: node.name }, sumOverCopies(node, (copy) => (copy.flushFailure === undefined ? 0 : 1)));
      },
    });
    // Figures of every shard copy of an index, summed per index.
    for (const [name, help, figure] of [
      ['tessera_index_bytes', 'Bytes on disk of every shard copy of an index (directories measured at most every few seconds)', (copy: CopyStats) => copy.bytes],
      ['tessera_index_segments', 'Search segments of every shard copy of an index', (copy: CopyStats) => copy.search?.segments ?? 0],
      ['tessera_index_write_buffer_bytes', 'Estimated heap bytes of the write buffers (current and waiting for their flush) of every shard copy of an index',
        (copy: CopyStats) => copy.search?.writeBufferBytes ?? 0],
    ] as const) {
      new Gauge({
        name,
        help,
        labelNames: ['index'],
        registers: [this.registry],
        async collect() {
          this.reset();
          const byIndex = new Map<string, number>();
          for (const node of await metrics.nodeStats()) {
            for (const copy of node.shards) byIndex.set(copy.index, (byIndex.get(copy.index) ?? 0) + figure(copy));
          }
          for (const [index, n] of byIndex) this.set({ index }, n);
        },
      });
    }
    new Gauge({
      name: 'tessera_replication_lag_operations',
      help: 'Changes a replica shard copy is behind its primary (primary seq − replica checkpoint), asked of the nodes at scrape time',
      labelNames: ['index', 'shard', 'node'],
      registers: [this.registry],
      async collect() {
        this.reset();
        const lags = await metrics.replicationLag?.().catch(() => undefined);
        if (lags) for (const lag of lags) this.set({ index: lag.index, shard: String(lag.shard), node: lag.node }, lag.operations);
      },
    });
    new Counter({
      name: 'tessera_log_lines_dropped_total',
      help: 'Log lines this process could not write: its standard output was closed, failed or fell too far behind (logging never blocks the server)',
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(metrics.sources?.logLinesDropped?.() ?? 0);
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
    new Gauge({
      name: 'tessera_http_request_body_bytes',
      help: 'Request body bytes the HTTP connections hold now (being received, queued or handled), bounded by bodiesBytesMax',
      registers: [this.registry],
      collect() {
        this.set(metrics.sources?.bodyBytesHeld?.() ?? 0);
      },
    });
  }

  /** Where scrape-time figures come from (set once the server is up). */
  attach(sources: MetricsSources): void {
    this.sources = sources;
  }

  /** Where the replication lag gauge comes from. */
  attachReplication(lag: () => Promise<ReplicationLag[]>): void {
    this.replicationLag = lag;
  }

  /** A read on a coordinator that is not elected, by what made its state current (coordinator.ts `caughtUp`). */
  countStateFence(via: 'lease' | 'elected' | 'etcd'): void {
    this.stateFences.inc({ via });
  }

  /** A document write on a coordinator that is not elected, by where it went (replication/replicator.ts `writeDirect`). */
  countRoutedWrite(via: 'primary' | 'elected'): void {
    this.routedWrites.inc({ via });
  }

  /** A request refused by the API keys (401, 403), by why (auth/authorizer.ts). */
  countAuthFailure(reason: AuthFailure): void {
    this.authFailures.inc({ reason });
  }

  observeRequest(method: string, status: number, seconds: number, operation: string | undefined): void {
    let byStatus = this.requestSeries.get(method);
    if (byStatus === undefined) this.requestSeries.set(method, byStatus = []);
    let series = byStatus[status];
    if (series === undefined) {
      series = byStatus[status] = {
        summary: this.requests.seriesOf({ method, status: String(status) }),
        histogram: this.requestHistogram.seriesOf({ method, status_class: STATUS_CLASSES[Math.floor(status / 100) - 1] ?? 'other' }),
      };
    }
    if (series.summary !== null) observeSeries(series.summary, seconds);
    if (series.histogram !== null) series.histogram.observe(seconds);
    if (operation === undefined || status >= 500) return;
    let op = this.operationSeries.get(operation);
    if (op === undefined) this.operationSeries.set(operation, op = this.operations.seriesOf({ operation }));
    if (op !== null) observeSeries(op, seconds);
  }

  /** `client`, timing every call into `tessera_rpc_call_duration_seconds`. */
  timeRpc(client: RpcClient): RpcClient {
    return new TimedRpcClient(client, this.rpcSeriesOf);
  }

  private readonly rpcSeriesOf = (method: string): HistogramSeries | null => {
    let series = this.rpcSeries.get(method);
    if (series === undefined) {
      series = this.rpcHistogram.seriesOf({ method });
      // Methods are the coordinator's own names, but bound the map like any other.
      if (this.rpcSeries.size < HISTOGRAM_SERIES_MAX) this.rpcSeries.set(method, series);
    }
    return series;
  };

  private nodeStats(): Promise<NodeStatsReply[]> {
    this.scrapeNodeStats ??= (this.sources?.nodeStats() ?? Promise.resolve([])).catch(() => []);
    return this.scrapeNodeStats;
  }

  async text(): Promise<{ contentType: string; body: string }> {
    this.scrapeNodeStats = undefined;
    try {
      // prom-client writes a NaN sample (an event-loop lag mean before its first sample) as `Nan`; the exposition format spells it `NaN`.
      return { contentType: this.registry.contentType, body: (await this.registry.metrics()).replace(/ Nan$/gm, ' NaN') };
    } finally {
      this.scrapeNodeStats = undefined;
    }
  }
}

/** A figure summed over a node's shard copies. */
function sumOverCopies(node: NodeStatsReply, figure: (copy: CopyStats) => number): number {
  let total = 0;
  for (const copy of node.shards) total += figure(copy);
  return total;
}

/** Commit-time series per node and kind (buffered, synced): the node's shard copies summed. */
function commitSeries(nodes: NodeStatsReply[]): CollectedSeries[] {
  const out: CollectedSeries[] = [];
  for (const node of nodes) {
    for (const sync of ['false', 'true'] as const) {
      let total: { bounds: readonly number[]; counts: number[]; count: number; sum: number } | undefined;
      for (const copy of node.shards) {
        const h = sync === 'true' ? copy.commitSeconds.synced : copy.commitSeconds.buffered;
        if (total === undefined) {
          total = { bounds: h.bounds, counts: [...h.counts], count: h.count, sum: h.sum };
          continue;
        }
        // One engine per node: its copies share the bounds. A copy that does not is left out rather than misfiled.
        if (h.bounds.length !== total.bounds.length || h.bounds.some((b, i) => b !== total?.bounds[i])) continue;
        for (let i = 0; i < total.counts.length; i++) total.counts[i] = (total.counts[i] as number) + (h.counts[i] ?? 0);
        total.count += h.count;
        total.sum += h.sum;
      }
      if (total !== undefined) out.push({ labels: { node: node.name, sync }, ...total });
    }
  }
  return out;
}
