/**
 * SEARCH and COUNT when a shard's primary is down: they read an in-sync
 * replica instead (docs/cluster.md "The write path", reads), and answer 503
 * only when no in-sync copy of a shard is on an active node. A coordinator's
 * HTTP handler runs over the nodes of an in-process cluster
 * (in-process-cluster.ts), whose nodes can be killed and paused.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Coordinator } from '@tessera/coordinator';
import { InProcessCluster } from './in-process-cluster.js';

let cluster: InProcessCluster;
let coordinator: Coordinator;
/** The coordinator's own directory: it may still write its cluster state while the nodes stop. */
let coordinatorDir: string | undefined;

afterEach(async () => {
  await cluster?.stop();
  if (coordinatorDir !== undefined) await rm(coordinatorDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  coordinatorDir = undefined;
});

async function start(nodes: string[]): Promise<void> {
  cluster = await InProcessCluster.start(nodes);
  coordinatorDir = await mkdtemp(join(tmpdir(), 'tessera-search-failover-'));
  coordinator = await Coordinator.create({
    identity: { name: 'coordinator', clusterName: 'test', version: '0', libraries: {} },
    stateFile: join(coordinatorDir, 'cluster-state.json'),
    nodes: cluster.nodes,
    indexDefaults: { number_of_shards: 1, number_of_replicas: 1 },
    decodeLimits: { depthMax: 64, fieldsMax: 1000, yamlAliasesMax: 100 },
    log: pino({ level: 'silent' }),
    slowRequestMs: 60_000,
    restoreBatchItems: 1000,
    restoreItemBytesMax: 1 << 20,
  });
}

async function http(method: string, target: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const [path = target, query = ''] = target.split('?');
  const res = await coordinator.handle({
    method, originalMethod: method, target, path, query, httpVersion: 11,
    headers: Object.assign(Object.create(null) as Record<string, string>, body === undefined ? {} : { 'content-type': 'application/json' }),
    body: body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(body)),
    bodyStream: undefined, remoteAddress: '127.0.0.1', startedAt: process.hrtime.bigint(),
  });
  const text = res.body === undefined || res.body === null ? '' : res.body.toString();
  return { status: res.status, json: text.length > 0 ? JSON.parse(text) as Record<string, unknown> : {} };
}

async function fill(index: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const put = await http('PUT', `${index}d${i}`, { colour: i % 3 === 0 ? 'red' : 'blue', n: i });
    expect(put.status).toBe(200);
  }
}

/** Whether `/.nodes` still shows `node` as the index's primary (no promotion yet). */
async function isPrimary(node: string): Promise<boolean> {
  const nodes = (await http('GET', '/.nodes')).json as unknown as Array<{ name: string; shards: Array<{ primary: boolean }> }>;
  return nodes.find((n) => n.name === node)?.shards.some((s) => s.primary) === true;
}

describe('SEARCH and COUNT with a primary down', () => {
  it('read an in-sync replica while the lost primary is being replaced, with the full total', async () => {
    await start(['n1', 'n2', 'n3']);
    expect((await http('PUT', '/failover/', { _settings: { number_of_shards: 1, number_of_replicas: 2 } })).status).toBe(200);
    await fill('/failover/', 60);
    // The promotion asks every in-sync replica where it stands: with n3 paused it waits, and the switch lasts.
    cluster.pause('n3');
    await cluster.kill('n1');
    expect(await isPrimary('n1')).toBe(true);
    const search = await http('SEARCH', '/failover/', { _query: { colour: 'red' }, _limit: 100 });
    expect(search.status).toBe(200);
    expect(search.json.total).toBe(20);
    expect((search.json.hits as unknown[]).length).toBe(20);
    expect((await http('COUNT', '/failover/')).json).toMatchObject({ total: 60 });
    expect(await isPrimary('n1')).toBe(true);
    cluster.resume('n3');
    await cluster.until('a replica promoted', async () => !(await isPrimary('n1')));
    expect((await http('COUNT', '/failover/', { _query: { colour: 'blue' } })).json).toMatchObject({ total: 40 });
  });

  it('every shard answers when one node holding primaries is killed (3 shards, 1 replica)', async () => {
    await start(['n1', 'n2', 'n3']);
    await http('PUT', '/spread/', { _settings: { number_of_shards: 3, number_of_replicas: 1 } });
    await fill('/spread/', 90);
    await cluster.kill('n2');
    for (let round = 0; round < 5; round++) {
      expect((await http('COUNT', '/spread/')).json).toMatchObject({ total: 90 });
      expect((await http('SEARCH', '/spread/', { _query: { colour: 'red' }, _limit: 0 })).json).toMatchObject({ total: 30 });
    }
  });

  it('spreads searches over the in-sync copies: a search goes to the copy with the fewest in flight, so a stalled primary does not hold the next one', async () => {
    await start(['n1', 'n2']);
    expect((await http('PUT', '/spread-load/', { _settings: { number_of_shards: 1, number_of_replicas: 1 } })).status).toBe(200);
    await fill('/spread-load/', 30);
    expect(await isPrimary('n1')).toBe(true);
    // Idle, the primary answers; paused, its search waits (the node is still active: no failover).
    cluster.pause('n1');
    let firstDone = false;
    const first = http('SEARCH', '/spread-load/', { _query: { colour: 'red' }, _limit: 0 }).finally(() => { firstDone = true; });
    // The primary has one search in flight, the replica none: the next goes to the replica and is answered now.
    const second = await http('SEARCH', '/spread-load/', { _query: { colour: 'red' }, _limit: 100 });
    expect(second.status).toBe(200);
    expect(second.json.total).toBe(10);
    expect(firstDone).toBe(false);
    cluster.resume('n1');
    expect((await first).json.total).toBe(10);
    expect(await isPrimary('n1')).toBe(true);
  });

  it('answers 503 (node unavailable) when no in-sync copy of a shard is on an active node', async () => {
    await start(['n1', 'n2']);
    await http('PUT', '/lonely/', { _settings: { number_of_shards: 1, number_of_replicas: 1 } });
    await fill('/lonely/', 10);
    await cluster.kill('n2');
    await fill('/lonely/', 12);
    await cluster.kill('n1');
    for (const method of ['SEARCH', 'COUNT']) {
      const reply = await http(method, '/lonely/');
      expect(reply.status).toBe(503);
      expect(reply.json.message).toMatch(/Shard 1 of \/lonely\/ is on node 'n1', which is not active/);
    }
  });
});
