/**
 * Several coordinators sharing one cluster state through a real etcd
 * (issue 21; docs/cluster.md "Several coordinators"): two `tessera
 * coordinator --etcd` processes and three `tessera node` processes joining
 * both, on loopback. One coordinator is elected; the other serves reads,
 * runs document writes up to their routed call (which the elected one runs
 * through the primary and relays) and forwards the rest. kill -9 of the elected one under writes through both:
 * the survivor is elected within the lease + 2 s, every acknowledged write
 * is readable afterwards with its version or a later one, and etcd's history
 * of the state never shows one primary term held by two nodes.
 */
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { primaryTermHistory, spawnTessera, startCluster, until, type Cluster } from './cluster-harness.js';
import { call, removeDir } from './harness.js';
import { lostWrites, sharedVersions, startWriteLoad } from './write-load.js';
import { parsePrometheusText, valueOf } from './prometheus-text.js';

const LEASE_MS = 2_000;

let cluster: Cluster;
/** The running coordinators' HTTP APIs by name. */
const coordinators = new Map<string, { url: string }>();

beforeAll(async () => {
  cluster = await startCluster({ coordinators: 2, etcd: true, coordinatorLeaseMs: LEASE_MS, nodes: 3, coordinatorArgs: ['--replicas', '1', '--shards', '2'] });
  for (const name of cluster.coordinators.keys()) coordinators.set(name, { url: cluster.urlOf(name) });
  for (const { url } of coordinators.values()) await until('ready', async () => ((await call({ url }, 'GET', '/readyz')).status === 200 ? true : undefined));
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
  removeDir(cluster.dataDir);
}, 60_000);

const leaders = () => cluster.leaders();

it('elects exactly one coordinator, and both list both', async () => {
  const seen = await leaders();
  expect(seen).toHaveLength(2);
  expect(new Set(seen).size).toBe(1);
  const listed = (await call({ url: coordinators.get('c2')!.url }, 'GET', '/.nodes')).json as Array<{ name: string; role: string; local: boolean }>;
  expect(listed.filter((n) => n.role === 'coordinator').map((n) => n.name).sort()).toEqual(['c1', 'c2']);
  expect(listed.find((n) => n.local)?.name).toBe('c2');
});

it('takes a write through either coordinator and reads it through both', async () => {
  const [leader] = await leaders();
  const follower = leader === 'c1' ? 'c2' : 'c1';
  const written = await call({ url: coordinators.get(follower)!.url }, 'PUT', '/shared/1?commit', { title: 'through the follower' });
  expect(written.status).toBe(200);
  expect(written.json).toMatchObject({ _id: 1, _version: 1 });
  const again = await call({ url: coordinators.get(leader!)!.url }, 'PUT', '/shared/2', { title: 'through the leader', n: 2 });
  expect(again.status).toBe(200);
  const schemas: unknown[] = [];
  for (const { url } of coordinators.values()) {
    expect((await call({ url }, 'GET', '/shared/1')).json).toMatchObject({ title: 'through the follower' });
    expect((await call({ url }, 'GET', '/shared/2')).json).toMatchObject({ n: 2 });
    schemas.push((await call({ url }, 'GET', '/shared/._schema')).json);
  }
  // One schema, both fields in it, whichever coordinator is asked.
  expect(JSON.stringify(schemas[0])).toContain('"title"');
  expect(JSON.stringify(schemas[0])).toContain('"n"');
  expect(schemas[1]).toEqual(schemas[0]);
  const found = await call({ url: coordinators.get(follower)!.url }, 'SEARCH', '/shared/', { _query: { title: 'follower' } });
  expect(found.json).toMatchObject({ total: 1 });
});

/** A coordinator's `tessera_operations_seconds_count` for `operation` (0 before its first). */
async function operationCount(url: string, operation: string): Promise<number> {
  return metricValue(url, 'tessera_operations_seconds_count', { operation });
}

/** The value of one series of `/:metrics` (0 when absent). */
async function metricValue(url: string, name: string, labels: Record<string, string>): Promise<number> {
  return valueOf(parsePrometheusText(String((await call({ url }, 'GET', '/:metrics')).text)), name, labels, 0);
}

/** A coordinator's document writes so far, by where they went: straight to the primary or through the elected coordinator. */
async function routedWrites(url: string): Promise<{ primary: number; elected: number }> {
  return {
    primary: await metricValue(url, 'tessera_routed_writes_total', { via: 'primary' }),
    elected: await metricValue(url, 'tessera_routed_writes_total', { via: 'elected' }),
  };
}

it('runs document writes through the follower itself, the elected coordinator only relaying them; what changes the cluster state goes to the elected one', async () => {
  const [leader] = await leaders();
  const follower = leader === 'c1' ? 'c2' : 'c1';
  const { url } = coordinators.get(follower)!;
  // A new index and new fields: decided by the elected coordinator (the request is forwarded whole).
  const created = await call({ url }, 'PUT', '/direct/seed', { title: 'seed', n: 0, tags: ['a'] });
  expect(created.status).toBe(200);
  const before = { local: await operationCount(url, 'document.put'), forwarded: await operationCount(url, 'forwarded') };
  for (let i = 1; i <= 20; i++) {
    const put = await call({ url }, 'PUT', `/direct/d${i}`, { title: `document ${i}`, n: i, tags: ['b'] });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ _id: `d${i}`, _version: 1, n: i });
  }
  expect((await call({ url }, 'UPDATE', '/direct/d1', { n: 100 })).json).toMatchObject({ _version: 2, n: 100 });
  expect((await call({ url }, 'PATCH', '/direct/d2', [{ op: 'replace', path: '/n', value: 200 }])).json).toMatchObject({ _version: 2, n: 200 });
  expect((await call({ url }, 'PUT', '/direct/d3?version=7', { n: 3 })).status).toBe(409);
  expect((await call({ url }, 'DELETE', '/direct/d4')).status).toBe(204);
  const after = { local: await operationCount(url, 'document.put'), forwarded: await operationCount(url, 'forwarded') };
  expect(after.local - before.local).toBe(21); // 20 PUTs and the 409, answered here
  expect(after.forwarded).toBe(before.forwarded);
  // A field the schema lacks: forwarded, and then known to both.
  expect((await call({ url }, 'PUT', '/direct/new', { colour: 'red' })).status).toBe(200);
  expect(await operationCount(url, 'forwarded')).toBe(before.forwarded + 1);
  for (const { url: any } of coordinators.values()) {
    expect((await call({ url: any }, 'GET', '/direct/d1')).json).toMatchObject({ n: 100, _version: 2 });
    expect((await call({ url: any }, 'GET', '/direct/d4')).status).toBe(404);
    expect((await call({ url: any }, 'COUNT', '/direct/', { _query: { colour: 'red' } })).json).toMatchObject({ total: 1 });
    expect((await call({ url: any }, 'COUNT', '/direct/', { _query: { tags: 'b' } })).json).toMatchObject({ total: 19 });
  }
});

it('sends the follower\'s document writes straight to each shard\'s primary, which relays them to its replicas', async () => {
  const [leader] = await leaders();
  const follower = leader === 'c1' ? 'c2' : 'c1';
  const elected = coordinators.get(leader!)!;
  const { url } = coordinators.get(follower)!;
  const routed = () => routedWrites(url);
  for (const [path, replicas] of [['/solo/', 0], ['/pair/', 1]] as const) {
    expect((await call(elected, 'PUT', path, { _settings: { number_of_shards: 2, number_of_replicas: replicas } })).status).toBe(200);
    expect((await call(elected, 'PUT', `${path}seed`, { title: 'seed', n: 0 })).status).toBe(200);
    // The elected coordinator places each shard on its primary on the way of the first writes; until then they go through it.
    let warm = 0;
    await until(`${path} placed`, async () => {
      const before = (await routed()).primary;
      for (let k = 0; k < 4; k++) expect((await call({ url }, 'PUT', `${path}warm${warm++}`, { title: 'warm', n: -1 })).status).toBe(200);
      return (await routed()).primary - before === 4 ? true : undefined;
    });
    const before = await routed();
    for (let i = 1; i <= 40; i++) {
      const put = await call({ url }, 'PUT', `${path}s${i}`, { title: `doc ${i}`, n: i });
      expect(put.status).toBe(200);
      expect(put.json).toMatchObject({ _id: `s${i}`, _version: 1, n: i });
    }
    expect((await call({ url }, 'UPDATE', `${path}s1`, { n: 100 })).json).toMatchObject({ _version: 2, n: 100 });
    expect((await call({ url }, 'PUT', `${path}s2?version=7`, { n: 3 })).status).toBe(409);
    expect((await call({ url }, 'DELETE', `${path}s3`)).status).toBe(204);
    const after = await routed();
    expect({ primary: after.primary - before.primary, elected: after.elected - before.elected }).toEqual({ primary: 43, elected: 0 });
    for (const { url: any } of coordinators.values()) {
      expect((await call({ url: any }, 'GET', `${path}s1`)).json).toMatchObject({ n: 100, _version: 2 });
      expect((await call({ url: any }, 'GET', `${path}s40`)).json).toMatchObject({ n: 40, _version: 1 });
      expect((await call({ url: any }, 'GET', `${path}s3`)).status).toBe(404);
      expect((await call({ url: any }, 'COUNT', path, { _query: { title: 'doc' } })).json).toMatchObject({ total: 39 });
    }
  }
  // Every copy of the replicated index holds every write: each shard's two copies at the same seq with as many documents.
  await until('every copy of /pair/ alike', async () => {
    const list = (await call(elected, 'GET', '/.nodes')).json as Array<{ name: string; shards?: Array<{ index: string; shard: number; seq: number; documents?: number; in_sync: boolean }> }>;
    const copies = list.flatMap((n) => (n.shards ?? []).filter((c) => c.index === '/pair/'));
    if (copies.length !== 4 || copies.some((c) => !c.in_sync)) return undefined;
    return [1, 2].every((shard) => new Set(copies.filter((c) => c.shard === shard).map((c) => `${c.seq}/${c.documents}`)).size === 1) ? true : undefined;
  }, 10_000);
});

it('keeps the follower\'s writes going straight to the primary while a restarted replica recovers, and the replica ends with every write', async () => {
  const [leader] = await leaders();
  const follower = leader === 'c1' ? 'c2' : 'c1';
  const elected = coordinators.get(leader!)!;
  const { url } = coordinators.get(follower)!;
  const routed = () => routedWrites(url);
  expect((await call(elected, 'PUT', '/recov/', { _settings: { number_of_shards: 1, number_of_replicas: 1 } })).status).toBe(200);
  expect((await call(elected, 'PUT', '/recov/seed', { n: 0 })).status).toBe(200);
  const copies = async () => ((await call(elected, 'GET', '/.nodes')).json as Array<{ name: string; shards?: Array<{ index: string; primary: boolean; in_sync: boolean; seq: number; documents?: number }> }>)
    .flatMap((n) => (n.shards ?? []).filter((c) => c.index === '/recov/').map((c) => ({ node: n.name, ...c })));
  const replica = (await until('/recov/ has its two copies', async () => {
    const both = await copies();
    return both.length === 2 && both.every((c) => c.in_sync) ? both : undefined;
  })).find((c) => !c.primary)!.node;
  // The replica's node goes; writes go on (some through the elected coordinator while the primary is placed again).
  await cluster.nodes.get(replica)!.kill();
  let i = 0;
  await until(`${replica} out of sync`, async () => {
    for (let k = 0; k < 20; k++) expect((await call({ url }, 'PUT', `/recov/d${i++}`, { n: i })).status).toBe(200);
    return (await copies()).some((c) => c.node === replica && !c.in_sync) ? true : undefined;
  });
  for (let k = 0; k < 300; k++) expect((await call({ url }, 'PUT', `/recov/d${i++}`, { n: i })).status).toBe(200);
  // Placed direct again (without the replica) before it comes back.
  await until('/recov/ direct', async () => {
    const before = (await routed()).primary;
    expect((await call({ url }, 'PUT', `/recov/d${i++}`, { n: i })).status).toBe(200);
    return (await routed()).primary > before ? true : undefined;
  });
  const before = await routed();
  const restarted = cluster.startNode(replica);
  let writes = 0;
  // Writes through the follower from the restart until the replica is in sync again: every one straight to the primary.
  await until(`${replica} in sync again`, async () => {
    for (let k = 0; k < 10; k++, writes++) expect((await call({ url }, 'PUT', `/recov/d${i++}`, { n: i })).status).toBe(200);
    return (await copies()).some((c) => c.node === replica && c.in_sync) ? true : undefined;
  }, 30_000);
  await restarted;
  const after = await routed();
  expect({ primary: after.primary - before.primary, elected: after.elected - before.elected }).toEqual({ primary: writes, elected: 0 });
  // Both copies hold every write.
  await until('both copies of /recov/ alike', async () => {
    const both = await copies();
    return both.length === 2 && both.every((c) => c.in_sync) && new Set(both.map((c) => `${c.seq}/${c.documents}`)).size === 1 ? true : undefined;
  }, 10_000);
  expect((await call({ url }, 'COUNT', '/recov/', { _query: { n: { _in: { _range: { _from: 1 } } } } })).json).toMatchObject({ total: i });
}, 90_000);

it('shows through the other coordinator at once what the elected one acknowledged: a new index, its documents, a new field, an alias', async () => {
  const [leader] = await leaders();
  const follower = leader === 'c1' ? 'c2' : 'c1';
  const elected = coordinators.get(leader!)!;
  const other = coordinators.get(follower)!;
  const fenced = () => metricValue(other.url, 'tessera_state_fences_total', { via: 'lease' });
  const fencedBefore = await fenced();
  for (let k = 0; k < 20; k++) {
    expect((await call(elected, 'PUT', `/fresh${k}/`, { _settings: { number_of_shards: 2, number_of_replicas: 1 } })).status).toBe(200);
    expect((await call(other, 'GET', `/fresh${k}/`)).status).toBe(200);
    expect((await call(elected, 'PUT', `/fresh${k}/a`, { [`field${k}`]: 'word' })).status).toBe(200);
    expect((await call(other, 'GET', `/fresh${k}/a`)).json).toMatchObject({ [`field${k}`]: 'word', _version: 1 });
    expect((await call(other, 'SEARCH', `/fresh${k}/`, { _query: { [`field${k}`]: 'word' } })).json).toMatchObject({ total: 1 });
    expect((await call(elected, 'PUT', `/.aliases/fresh-alias${k}`, { _indexes: [`/fresh${k}/`] })).status).toBeLessThan(300);
    expect((await call(other, 'GET', `/fresh-alias${k}/a`)).status).toBe(200);
  }
  // Those reads were served under the follower's lease: the elected coordinator had it take each change before acknowledging it.
  expect(await fenced() - fencedBefore).toBeGreaterThan(50);
});

it('survives kill -9 of the elected coordinator under writes through both: no acknowledged write lost, one primary per term', async () => {
  const [leader] = await leaders();
  const survivor = leader === 'c1' ? 'c2' : 'c1';
  // Two writers through each coordinator, 200 IDs each, written over and over.
  const load = startWriteLoad((via) => coordinators.get(via)?.url, '/load/', [0, 1000, 2000, 3000].map((offset, w) => ({
    via: w % 2 === 0 ? 'c1' : 'c2',
    id: (i: number) => `w${offset + (i % 200)}`,
  })));
  await new Promise((r) => setTimeout(r, 1500));
  expect(load.acks.length).toBeGreaterThan(0);

  const killedAt = Date.now();
  await cluster.coordinators.get(leader!)!.kill();
  coordinators.delete(leader!);
  const electedAfterMs = await until('the survivor elected', async () =>
    ((await leaders())[0] === survivor ? Date.now() - killedAt : undefined), 30_000);
  // The lease runs out (whole seconds in etcd), then the survivor campaigns.
  expect(electedAfterMs).toBeLessThanOrEqual(LEASE_MS + 2_000 + 1_000);
  const electedAt = Date.now();
  // Writes through the survivor go on after the election (waited for, not timed: CI machines are slow).
  const firstAckAfterMs = await until('a write sent after the election acknowledged', async () => {
    const ack = load.acks.find((a) => a.sentAt > electedAt);
    return ack === undefined ? undefined : ack.ackedAt - electedAt;
  }, 20_000);
  await new Promise((r) => setTimeout(r, 500));
  await load.stop();

  expect(await lostWrites(coordinators.get(survivor)!.url, '/load/', load.acks)).toEqual([]);
  // Refused while no coordinator could relay (503 leader_unavailable), or cut off with the killed one: never a 4xx or a 500.
  expect(Object.keys(load.failureStatuses).filter((status) => status !== '503' && status !== 'no answer')).toEqual([]);
  expect(sharedVersions(load.acks)).toEqual([]);
  process.stdout.write(`coordinator failover: elected after ${electedAfterMs} ms, first write after it acknowledged ${firstAckAfterMs} ms later; ${load.acks.length} writes acknowledged, ${load.failures} requests refused while electing (${JSON.stringify(load.failureStatuses)})\n`);

  // etcd's history of the cluster state: no primary term ever named two primaries.
  const history = await primaryTermHistory(cluster.etcd!);
  expect(history.primaries.size).toBeGreaterThan(0);
  expect(history.conflicts).toEqual([]);
}, 120_000);

it('keeps the state across an etcd restart, and a coordinator cut off from etcd says why in /readyz', async () => {
  const [survivor] = [...coordinators.keys()];
  const url = coordinators.get(survivor!)!.url;
  const before = (await call({ url }, 'GET', '/shared/1')).json;
  await cluster.etcd!.restart();
  await until('elected again after the etcd restart', async () => ((await leaders())[0] === survivor ? true : undefined), 30_000);
  expect((await call({ url }, 'GET', '/shared/1')).json).toEqual(before);
  await until('a write after the etcd restart', async () => ((await call({ url }, 'PUT', '/shared/3', { after: 'restart' })).status === 200 ? true : undefined));

  // A third coordinator whose only way to etcd is a loopback relay, then the relay stops.
  const sockets = new Set<Socket>();
  const target = new URL(cluster.etcd!.endpoint);
  const relay = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) { sockets.add(s); s.on('error', () => s.destroy()); s.on('close', () => sockets.delete(s)); }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
  const relayed = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
  const proc = await spawnTessera('c3', ['coordinator', '--name', 'c3', '--port', '0', '--rpc-port', '0', '--data', join(cluster.dataDir, 'c3'),
    '--etcd', relayed, '--etcd-prefix', cluster.etcd!.prefix, '--coordinator-lease-ms', String(LEASE_MS)], { TESSERA_LOG_LEVEL: 'info' }, 'listening');
  const c3 = `http://127.0.0.1:${(proc.logs.find((l) => l.msg === 'listening') as { port: number }).port}`;
  try {
    expect((await leaders())[0]).toBe(survivor);
    // 'listening' comes before c3 has advertised its addresses in etcd, a second put after its first registration:
    // a relay cut before that fails its start, not its lease. Listed with its HTTP port, c3 has advertised.
    await until('c3 advertised', async () => {
      const nodes = (await call({ url }, 'GET', '/.nodes')).json as Array<{ name: string; role?: string; http_port?: number }>;
      return nodes.some((n) => n.name === 'c3' && n.role === 'coordinator' && n.http_port !== undefined) ? true : undefined;
    }, 20_000);
    relay.close();
    for (const s of sockets) s.destroy();
    const notReady = await until('c3 not ready', async () => {
      if (proc.process.exitCode !== null || proc.process.signalCode !== null) {
        throw new Error(`c3 exited (${proc.process.exitCode ?? proc.process.signalCode}): ${JSON.stringify(proc.logs.filter((l) => Number(l.level) >= 50))}`);
      }
      const ready = await call({ url: c3 }, 'GET', '/readyz');
      if (ready.status === 503 && /lease|cluster-state store|etcd/.test(String((ready.json as { reason?: string }).reason))) return ready.json;
      throw new Error(`${ready.status} ${ready.text}`);
    }, 20_000);
    expect(notReady).toMatchObject({ status: 'not ready' });
    // The elected one stays elected, and goes on.
    expect(await leaders()).toEqual([survivor]);
    expect((await call({ url }, 'PUT', '/shared/5', { still: 'writing' })).status).toBe(200);
  } finally {
    relay.close();
    for (const s of sockets) s.destroy();
    await proc.kill();
  }
}, 120_000);
