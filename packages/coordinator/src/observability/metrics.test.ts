import { TesseraError } from '@tessera/errors';
import { DEFERRED, type NodeStatsReply, type RpcClient } from '@tessera/rpc';
import { Registry } from 'prom-client';
import { FixedHistogram } from './fixed-histogram.js';
import { Metrics } from './metrics.js';

/** The sample lines of one metric family (`name…`), as `labels value` text. */
function samples(text: string, name: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(name) && !line.startsWith('#'));
}

describe('FixedHistogram', () => {
  it('exposes cumulative buckets, +Inf equal to the count, sum and count per label set', async () => {
    const registry = new Registry();
    const h = new FixedHistogram('t_seconds', 'test', ['kind'], [0.1, 1], 8, registry);
    const a = h.seriesOf({ kind: 'a' });
    const b = h.seriesOf({ kind: 'b' });
    expect(a).not.toBeNull();
    for (const v of [0.05, 0.1, 0.5, 2]) a!.observe(v);
    b!.observe(0.2);
    expect(h.seriesOf({ kind: 'a' })).toBe(a);
    const text = await registry.metrics();
    expect(text).toContain('# TYPE t_seconds histogram');
    expect(samples(text, 't_seconds')).toEqual([
      't_seconds_bucket{kind="a",le="0.1"} 2',
      't_seconds_bucket{kind="a",le="1"} 3',
      't_seconds_bucket{kind="a",le="+Inf"} 4',
      't_seconds_sum{kind="a"} 2.65',
      't_seconds_count{kind="a"} 4',
      't_seconds_bucket{kind="b",le="0.1"} 0',
      't_seconds_bucket{kind="b",le="1"} 1',
      't_seconds_bucket{kind="b",le="+Inf"} 1',
      't_seconds_sum{kind="b"} 0.2',
      't_seconds_count{kind="b"} 1',
    ]);
  });

  it('keeps at most seriesMax label sets (client input cannot grow it)', () => {
    const h = new FixedHistogram('t2_seconds', 'test', ['k'], [1], 2, new Registry());
    expect(h.seriesOf({ k: '1' })).not.toBeNull();
    expect(h.seriesOf({ k: '2' })).not.toBeNull();
    expect(h.seriesOf({ k: '3' })).toBeNull();
    expect(h.seriesOf({ k: '1' })).not.toBeNull();
  });

  it('refuses bounds that do not increase', () => {
    expect(() => new FixedHistogram('t3_seconds', 'test', [], [1, 1], 1, new Registry())).toThrow(/increase/);
  });
});

/** A document's place, for calls whose params the fake clients ignore. */
const DOC = { index: '/i/', shard: 1, id: 'x' };

function fakeClient(answer: (method: string) => Promise<unknown>): RpcClient {
  return { closed: false, inFlight: 0, call: <T>(method: string) => answer(method) as Promise<T>, close: async () => undefined };
}

function histogram(counts: number[], sum: number) {
  return { bounds: [0.001, 0.01], counts, count: counts.reduce((a, b) => a + b, 0), sum };
}

describe('Metrics', () => {
  it('HTTP requests: a summary by status and a histogram by status class', async () => {
    const metrics = new Metrics();
    metrics.observeRequest('GET', 200, 0.0003, 'document.get');
    metrics.observeRequest('GET', 204, 0.002, 'document.get');
    metrics.observeRequest('GET', 404, 0.0001, 'document.get');
    metrics.observeRequest('PUT', 503, 3, 'document.put');
    const { body } = await metrics.text();
    expect(body).toContain('tessera_http_request_duration_seconds_count{method="GET",status_class="2xx"} 2');
    expect(body).toContain('tessera_http_request_duration_seconds_count{method="GET",status_class="4xx"} 1');
    expect(body).toContain('tessera_http_request_duration_seconds_bucket{method="GET",status_class="2xx",le="0.00025"} 0');
    expect(body).toContain('tessera_http_request_duration_seconds_bucket{method="GET",status_class="2xx",le="0.0005"} 1');
    expect(body).toContain('tessera_http_request_duration_seconds_bucket{method="PUT",status_class="5xx",le="2.5"} 0');
    expect(body).toContain('tessera_http_request_duration_seconds_bucket{method="PUT",status_class="5xx",le="5"} 1');
    expect(body).toContain('tessera_http_requests_seconds_count{method="GET",status="204"} 1');
  });

  it('RPC calls are timed by method through the wrapped client, failures too, results and errors passed through', async () => {
    const metrics = new Metrics();
    const failure = new TesseraError('boom', 503, 'no');
    const client = metrics.timeRpc(fakeClient(async (method) => {
      if (method === 'doc.write') throw failure;
      return { ok: method };
    }));
    expect(await client.call('doc.get', DOC)).toEqual({ ok: 'doc.get' });
    expect(await client.call('doc.get', DOC)).toEqual({ ok: 'doc.get' });
    await expect(client.call('doc.write', { ...DOC, op: 'index' })).rejects.toBe(failure);
    const { body } = await metrics.text();
    expect(body).toContain('tessera_rpc_call_duration_seconds_count{method="doc.get"} 2');
    expect(body).toContain('tessera_rpc_call_duration_seconds_count{method="doc.write"} 1');
    expect(body).toContain('tessera_rpc_call_duration_seconds_bucket{method="doc.get",le="+Inf"} 2');
  });

  it('RPC calls answered at once (callNow) are timed as calls; deferred ones are left to their call', async () => {
    const metrics = new Metrics();
    const failure = new TesseraError('bad', 400, 'no');
    const inner: RpcClient = {
      ...fakeClient(async (method) => ({ later: method })),
      callNow: <T>(method: string): T | typeof DEFERRED => {
        if (method === 'shard.stats') throw failure;
        return (method === 'doc.get' ? { now: method } : DEFERRED) as T | typeof DEFERRED;
      },
    };
    const client = metrics.timeRpc(inner);
    expect(client.callNow?.('doc.get', DOC)).toEqual({ now: 'doc.get' });
    expect(client.callNow?.('doc.info', DOC)).toBe(DEFERRED);
    expect(() => client.callNow?.('shard.stats', { index: DOC.index, shard: DOC.shard })).toThrow(failure);
    expect(metrics.timeRpc(fakeClient(async () => null)).callNow?.('doc.get', DOC)).toBe(DEFERRED);
    const { body } = await metrics.text();
    expect(body).toContain('tessera_rpc_call_duration_seconds_count{method="doc.get"} 1');
    expect(body).toContain('tessera_rpc_call_duration_seconds_count{method="shard.stats"} 1');
    expect(body).not.toContain('method="doc.info"');
  });

  it('storage commits per node and kind, and bytes per index, from the nodes at scrape time (one call per scrape)', async () => {
    const metrics = new Metrics();
    let calls = 0;
    const nodes: NodeStatsReply[] = [
      {
        name: 'n1',
        shards: [
          { index: '/a/', shard: 1, documents: 3, seq: 3, bytes: 1000, commitSeconds: { buffered: histogram([1, 1, 0], 0.005), synced: histogram([0, 0, 1], 0.02) } },
          { index: '/a/', shard: 2, documents: 1, seq: 1, bytes: 500, commitSeconds: { buffered: histogram([2, 0, 0], 0.001), synced: histogram([0, 0, 0], 0) } },
          { index: '/b/', shard: 1, documents: 0, seq: 0, bytes: 20, commitSeconds: { buffered: histogram([0, 0, 0], 0), synced: histogram([0, 0, 0], 0) } },
        ],
      },
      { name: 'n2', shards: [{ index: '/a/', shard: 1, documents: 3, seq: 3, bytes: 900, commitSeconds: { buffered: histogram([0, 1, 0], 0.004), synced: histogram([0, 0, 0], 0) } }] },
    ];
    metrics.attach({
      documentsByIndex: async () => new Map([['/a/', 4], ['/b/', 0]]),
      connections: () => 3,
      nodeStats: async () => {
        calls++;
        return nodes;
      },
    });
    const { body } = await metrics.text();
    expect(calls).toBe(1);
    expect(samples(body, 'tessera_index_bytes')).toEqual(['tessera_index_bytes{index="/a/"} 2400', 'tessera_index_bytes{index="/b/"} 20']);
    expect(samples(body, 'tessera_storage_commit_duration_seconds_count')).toEqual([
      'tessera_storage_commit_duration_seconds_count{node="n1",sync="false"} 4',
      'tessera_storage_commit_duration_seconds_count{node="n1",sync="true"} 1',
      'tessera_storage_commit_duration_seconds_count{node="n2",sync="false"} 1',
      'tessera_storage_commit_duration_seconds_count{node="n2",sync="true"} 0',
    ]);
    expect(body).toContain('tessera_storage_commit_duration_seconds_bucket{node="n1",sync="false",le="0.001"} 3');
    expect(body).toContain('tessera_storage_commit_duration_seconds_bucket{node="n1",sync="false",le="0.01"} 4');
    expect(body).toContain('tessera_storage_commit_duration_seconds_sum{node="n1",sync="false"} 0.006');
    expect(body).toContain('tessera_documents{index="/a/"} 4');
    expect(body).toContain('tessera_http_current_connections 3');
    await metrics.text();
    expect(calls).toBe(2);
  });

  it('segment flushes, merges and writes held back per node, flush-failing copies per node, segments and write buffer bytes per index', async () => {
    const metrics = new Metrics();
    const search = (flushes: number, flushFailures: number, merges: number, mergeFailures: number, segments: number, writeBufferBytes: number) => ({
      segments, segmentBytes: 0, writeBufferBytes, flushes, flushFailures, merges, mergeFailures, writeHolds: flushes * 10,
    });
    const copy = (index: string, shard: number) => ({
      index, shard, documents: 0, seq: 0, bytes: 0, commitSeconds: { buffered: histogram([0, 0, 0], 0), synced: histogram([0, 0, 0], 0) },
    });
    const nodes: NodeStatsReply[] = [
      {
        name: 'n1',
        shards: [
          { ...copy('/a/', 1), search: search(5, 2, 1, 0, 3, 1000), flushFailure: { message: 'disk full', failures: 2, sinceMs: 0 } },
          { ...copy('/b/', 1), search: search(1, 0, 0, 1, 1, 200) },
        ],
      },
      // A node that sends no index figures counts as none.
      { name: 'n2', shards: [{ ...copy('/a/', 1), search: search(4, 0, 2, 0, 2, 50) }, copy('/a/', 2)] },
    ];
    metrics.attach({ documentsByIndex: async () => new Map(), connections: () => 0, nodeStats: async () => nodes });
    const { body } = await metrics.text();
    expect(samples(body, 'tessera_index_flushes_total')).toEqual(['tessera_index_flushes_total{node="n1"} 6', 'tessera_index_flushes_total{node="n2"} 4']);
    expect(samples(body, 'tessera_index_flush_failures_total')).toEqual([
      'tessera_index_flush_failures_total{node="n1"} 2', 'tessera_index_flush_failures_total{node="n2"} 0',
    ]);
    expect(samples(body, 'tessera_index_merges_total')).toEqual(['tessera_index_merges_total{node="n1"} 1', 'tessera_index_merges_total{node="n2"} 2']);
    expect(samples(body, 'tessera_index_merge_failures_total')).toEqual([
      'tessera_index_merge_failures_total{node="n1"} 1', 'tessera_index_merge_failures_total{node="n2"} 0',
    ]);
    expect(samples(body, 'tessera_index_write_holds_total')).toEqual([
      'tessera_index_write_holds_total{node="n1"} 60', 'tessera_index_write_holds_total{node="n2"} 40',
    ]);
    expect(samples(body, 'tessera_index_flush_failing_copies')).toEqual([
      'tessera_index_flush_failing_copies{node="n1"} 1', 'tessera_index_flush_failing_copies{node="n2"} 0',
    ]);
    expect(samples(body, 'tessera_index_segments')).toEqual(['tessera_index_segments{index="/a/"} 5', 'tessera_index_segments{index="/b/"} 1']);
    expect(samples(body, 'tessera_index_write_buffer_bytes')).toEqual([
      'tessera_index_write_buffer_bytes{index="/a/"} 1050', 'tessera_index_write_buffer_bytes{index="/b/"} 200',
    ]);
  });

  it('a node source that fails leaves its metrics empty, not the scrape failed', async () => {
    const metrics = new Metrics();
    metrics.attach({ documentsByIndex: async () => new Map(), connections: () => 0, nodeStats: () => Promise.reject(new Error('down')) });
    const { body } = await metrics.text();
    expect(body).toContain('# TYPE tessera_index_bytes gauge');
    expect(samples(body, 'tessera_index_bytes')).toEqual([]);
  });
});
