/**
 * Fault tests with real processes on loopback (issue 5, "What must show
 * that it works"): a coordinator and three `tessera node` processes
 * (cluster-harness.ts), a seeded write load, and a fault —
 *
 * (a) kill -9 of a node under load, then its restart: no acknowledged write
 *     is lost, and every copy converges to the same `(id, _version)` set
 *     within 30 s;
 * (b) SIGSTOP of a primary past the heartbeat timeout, a replica promoted,
 *     SIGCONT: no write acknowledged under the old term is missing, no
 *     document diverges;
 * (c) read-modify-write with `_version` from 8 clients on 10 keys during (a):
 *     no lost update, losers get 409, never a 5xx.
 *
 * Every operation is logged (client, operation, key, token, expected
 * version, start, end, status, version) to `history.jsonl` in the cluster's
 * data directory, and checked afterwards: the last acknowledged write of a
 * key is what the key holds (or a later write whose outcome the client did
 * not learn). Copies are compared on disk, after a clean stop, with the
 * engine itself. Seed: TESSERA_FAULT_SEED.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { Shard } from '@tessera/engine';
import { shardDirectory } from '@tessera/node';
import { call } from './harness.js';
import { startCluster, type Cluster } from './cluster-harness.js';
import { random } from './random.js';

const SEED = Number(process.env.TESSERA_FAULT_SEED ?? 5_2024);
const INDEX = '/faults/';
const CONVERGE_MS = 30_000;

interface Operation {
  client: string;
  op: 'put' | 'get' | 'rmw';
  id: string;
  token?: string;
  expected?: number;
  start: number;
  end: number;
  status: number;
  version?: number;
  code?: string;
}

class History {
  readonly operations: Operation[] = [];
  constructor(private readonly file: string) {}

  record(op: Operation): void {
    this.operations.push(op);
    appendFileSync(this.file, `${JSON.stringify(op)}\n`);
  }
}

/** A status the client cannot conclude from: the write may or may not have happened. */
function unknownOutcome(status: number): boolean {
  return status === 0 || status >= 500;
}

let cluster: Cluster | undefined;

afterEach(async () => {
  await cluster?.kill();
  cluster = undefined;
});

async function createIndex(c: Cluster, shards: number): Promise<string[][]> {
  const created = await call(c, 'PUT', INDEX, { _settings: { number_of_shards: shards, number_of_replicas: 1 } });
  expect(created.status).toBeLessThan(300);
  const got = await call(c, 'GET', INDEX);
  return (got.json as { _settings: { shards: string[][] } })._settings.shards;
}

async function timed(fn: () => Promise<{ status: number; json?: unknown; code?: string }>): Promise<{ status: number; json?: unknown; start: number; end: number }> {
  const start = Date.now();
  try {
    const r = await fn();
    return { status: r.status, json: r.json, start, end: Date.now() };
  } catch {
    return { status: 0, start, end: Date.now() };
  }
}

/** Blind writers: each owns its keys and writes them in turn, so a key's acknowledged writes are ordered. */
function blindWriters(c: Cluster, history: History, count: number, keys: number, rng: () => number, running: () => boolean): Promise<void>[] {
  return Array.from({ length: count }, async (_, w) => {
    for (let n = 0; running(); n++) {
      const id = `w${w}-${Math.floor(rng() * keys)}`;
      const token = `w${w}.${n}`;
      const r = await timed(() => call(c, 'PUT', `${INDEX}${id}?echo`, { token }));
      const reply = r.json as { _version?: number; code?: string } | undefined;
      history.record({ client: `w${w}`, op: 'put', id, token, start: r.start, end: r.end, status: r.status, ...(reply?._version === undefined ? {} : { version: reply._version }) });
    }
  });
}

/** Read-modify-write clients on shared keys, with `?version`. */
function rmwClients(c: Cluster, history: History, keys: string[], rng: () => number, running: () => boolean): Promise<void>[] {
  return Array.from({ length: 8 }, async (_, k) => {
    for (let n = 0; running(); n++) {
      const id = keys[Math.floor(rng() * keys.length)] as string;
      const read = await timed(() => call(c, 'GET', `${INDEX}${id}`));
      const doc = read.json as { _version: number; count: number } | undefined;
      history.record({ client: `r${k}`, op: 'get', id, start: read.start, end: read.end, status: read.status, ...(doc?._version === undefined ? {} : { version: doc._version }) });
      if (read.status !== 200 || doc === undefined) continue;
      const token = `r${k}.${n}`;
      const write = await timed(() => call(c, 'PUT', `${INDEX}${id}?version=${doc._version}&echo`, { count: doc.count + 1, token }));
      const reply = write.json as { _version?: number } | undefined;
      history.record({ client: `r${k}`, op: 'rmw', id, token, expected: doc._version, start: write.start, end: write.end, status: write.status,
        ...(reply?._version === undefined ? {} : { version: reply._version }) });
    }
  });
}

/** Until every allocated copy of the index shows in sync in `/.nodes`. */
async function waitForConvergence(c: Cluster, timeoutMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const r = await call(c, 'GET', '/.nodes').catch(() => undefined);
    const nodes = (r?.status === 200 ? r.json : []) as Array<{ active: boolean; shards?: Array<{ index: string; in_sync: boolean }> }>;
    const copies = nodes.flatMap((n) => (n.shards ?? []).filter((s) => s.index === INDEX).map((s) => n.active && s.in_sync));
    if (copies.length > 0 && copies.every(Boolean)) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`copies not in sync after ${timeoutMs} ms: ${JSON.stringify(nodes)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** `(id, _version, token)` of every document of one copy, read from its directory with the engine (the cluster stopped). */
async function copyOnDisk(c: Cluster, node: string, shard: number): Promise<Array<[string | number, number, unknown]>> {
  const copy = await Shard.open({ path: shardDirectory(join(c.dataDir, node, 'nodes', node), INDEX, shard) });
  try {
    const out: Array<[string | number, number, unknown]> = [];
    for await (const doc of copy.documents()) out.push([doc.id, doc.version, doc.body.token]);
    return out;
  } finally {
    await copy.close();
  }
}

/**
 * The checks common to the faults: after a clean stop, every copy of a
 * shard holds the same documents and versions; every key holds its last
 * acknowledged write or a later write of unknown outcome; nothing holds a
 * write that was refused.
 */
async function checkHistory(c: Cluster, history: History, allocation: string[][]): Promise<void> {
  expect(await c.stop()).toBe(0);
  const final = new Map<string, { version: number; token: unknown }>();
  for (let shard = 1; shard <= allocation.length; shard++) {
    const copies = await Promise.all((allocation[shard - 1] as string[]).map((node) => copyOnDisk(c, node, shard)));
    for (const copy of copies.slice(1)) expect(copy.map(([id, v]) => [id, v])).toEqual((copies[0] as typeof copy).map(([id, v]) => [id, v]));
    for (const [id, version, token] of copies[0] ?? []) final.set(String(id), { version, token });
  }
  const byKey = new Map<string, Operation[]>();
  for (const op of history.operations) {
    if (op.op === 'get') continue;
    let list = byKey.get(op.id);
    if (list === undefined) byKey.set(op.id, list = []);
    list.push(op);
  }
  let acknowledged = 0;
  const wrong: unknown[] = [];
  for (const [id, ops] of byKey) {
    const held = final.get(id);
    const acked = ops.filter((o) => o.status >= 200 && o.status < 300);
    acknowledged += acked.length;
    // A blind writer's key is written by one client in turn: the last to end is the last. Shared keys are
    // written with `?version`: the highest version acknowledged is the last.
    const last = acked.reduce<Operation | undefined>((a, o) => (a === undefined || (o.op === 'rmw' ? (o.version ?? 0) > (a.version ?? 0) : o.end > a.end) ? o : a), undefined);
    if (last === undefined) continue;
    // Or a later write whose outcome the client did not learn.
    const possible = [last.token, ...ops.filter((o) => unknownOutcome(o.status) && o.start >= last.start && o !== last).map((o) => o.token)];
    if (!possible.includes(held?.token as string) || (held?.version ?? 0) < (last.version ?? 0)) {
      wrong.push({ id, held, lastAcknowledged: last, possible });
    }
    for (const refused of ops.filter((o) => o.status >= 400 && o.status < 500)) {
      if (held?.token === refused.token) wrong.push({ id, held, refused });
    }
  }
  expect(wrong).toEqual([]);
  expect(acknowledged).toBeGreaterThan(50);
}

describe('faults with real processes', () => {
  it('(a)+(c) kill -9 of a node under load, then its restart: no acknowledged write lost, copies converge; read-modify-write loses no update and never sees a 5xx', async () => {
    const rng = random(SEED);
    cluster = await startCluster({ nodes: 3 });
    const history = new History(join(cluster.dataDir, 'history.jsonl'));
    const allocation = await createIndex(cluster, 3);
    const shared = Array.from({ length: 10 }, (_, i) => `rmw${i}`);
    for (const id of shared) expect((await call(cluster, 'PUT', `${INDEX}${id}`, { count: 0 })).status).toBeLessThan(300);
    let running = true;
    const c = cluster;
    const load = [...blindWriters(c, history, 4, 25, random(SEED + 1), () => running), ...rmwClients(c, history, shared, random(SEED + 2), () => running)];
    const victim = cluster.nodeNames[Math.floor(rng() * cluster.nodeNames.length)] as string;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await cluster.nodes.get(victim)?.kill();
    await new Promise((resolve) => setTimeout(resolve, 2500));
    await cluster.startNode(victim);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    running = false;
    await Promise.all(load);
    const convergedMs = await waitForConvergence(cluster, CONVERGE_MS);
    expect(convergedMs).toBeLessThan(CONVERGE_MS);
    // The victim held a primary (promoted elsewhere) and a replica: back, the old primary's copy is copied whole
    // under the new term, the replica's replays the log.
    const logs = cluster.coordinator.logs;
    expect(logs.some((l) => l.msg === 'shard primary promoted' && l.lost === victim)).toBe(true);
    const recovered = logs.filter((l) => l.msg === 'shard copy in sync' && l.node === victim).map((l) => l.mode);
    expect(recovered.sort()).toEqual(['copy', 'log']);

    // (c): every read-modify-write that won is counted once; losers got 409; nothing got a 5xx.
    const rmw = history.operations.filter((o) => o.client.startsWith('r'));
    expect(rmw.filter((o) => o.status >= 500 || o.status === 0)).toEqual([]);
    const wins = rmw.filter((o) => o.op === 'rmw' && o.status >= 200 && o.status < 300);
    const losers = rmw.filter((o) => o.op === 'rmw' && o.status === 409);
    expect(wins.length).toBeGreaterThan(10);
    expect(losers.length).toBeGreaterThan(0);
    expect(rmw.filter((o) => o.op === 'rmw').length).toBe(wins.length + losers.length);
    for (const id of shared) {
      const got = await call(cluster, 'GET', `${INDEX}${id}`);
      expect({ id, count: (got.json as { count: number }).count }).toEqual({ id, count: wins.filter((o) => o.id === id).length });
    }
    // The blind writers were never refused either (the load rode through the fault).
    expect(history.operations.filter((o) => o.client.startsWith('w') && (o.status >= 500 || o.status === 0))).toEqual([]);
    await checkHistory(cluster, history, allocation);
  }, 120_000);

  it('(b) SIGSTOP of a primary past the heartbeat timeout, a replica promoted, SIGCONT: nothing acknowledged is lost, no document diverges', async () => {
    cluster = await startCluster({ nodes: 3 });
    const history = new History(join(cluster.dataDir, 'history.jsonl'));
    const allocation = await createIndex(cluster, 3);
    let running = true;
    const c = cluster;
    const load = blindWriters(c, history, 4, 25, random(SEED + 3), () => running);
    const victim = (allocation[Math.floor(random(SEED)() * allocation.length)] as string[])[0] as string;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const stopped = cluster.nodes.get(victim)?.process;
    stopped?.kill('SIGSTOP');
    await cluster.coordinator.waitForLog((l) => l.msg === 'shard primary promoted' && l.lost === victim, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    stopped?.kill('SIGCONT');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    running = false;
    await Promise.all(load);
    await waitForConvergence(cluster, CONVERGE_MS);
    const promoted = cluster.coordinator.logs.filter((l) => l.msg === 'shard primary promoted');
    expect(promoted.length).toBeGreaterThan(0);
    for (const line of promoted) expect(line).toMatchObject({ lost: victim, term: 2 });
    // The stopped primary's copies came back by a full copy under the new term.
    // Logged once the copy joins the in-sync set, which may come after the documents already agree: waited for (throws if it never comes).
    await cluster.coordinator.waitForLog((l) => l.msg === 'shard copy in sync' && l.node === victim && l.mode === 'copy', 20_000);
    const after = await call(cluster, 'GET', INDEX);
    await checkHistory(cluster, history, (after.json as { _settings: { shards: string[][] } })._settings.shards);
  }, 120_000);
});
