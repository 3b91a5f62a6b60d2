/**
 * Cluster harness: real `tessera coordinator` processes (HTTP and RPC on
 * ephemeral loopback ports) and N `tessera node` processes joining them,
 * each with its own data directory under one temporary root; waits until
 * every node is active in `/.nodes`. One coordinator keeps the cluster state
 * in its data directory; with `etcd`, a real etcd (scripts/etcd.mjs) holds
 * it and several coordinators may share it (one elected; `url` then picks
 * the next coordinator per request). The cluster answers the same `Server`
 * shape as harness.ts (`url`, `stop()`, the coordinator's `logs`…), so an
 * integration suite runs unchanged against either: `startServers(kind)` and
 * SERVER_KINDS (env TESSERA_TEST_SERVERS, default `embedded,cluster`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { EMPTY_CLUSTER_STATE, readLocalState, type ClusterState } from '@tessera/coordinator';
import { Etcd3 } from 'etcd3';
import { call, CLI, REPO_ROOT, removeDir, startServer, tempDataDir, type Server } from './harness.js';

/** One `tessera` process of the cluster, with the JSON lines it logged. */
export interface ClusterProcess {
  name: string;
  process: ChildProcess;
  logs: Array<Record<string, unknown>>;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** SIGTERM and wait for exit. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
  waitForLog(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
}

export interface Cluster extends Server {
  /** The HTTP API of the first coordinator (`url` picks one per request when there are several). */
  rpcPort: number;
  /** What nodes join: `ws://127.0.0.1:<rpcPort>`, every coordinator's, comma-separated. */
  rpcUrl: string;
  /** The first coordinator. */
  coordinator: ClusterProcess;
  /** Every coordinator by name (one: `coordinator`; several: `c1`, `c2`…); one killed stays here. */
  coordinators: Map<string, ClusterProcess>;
  /** A coordinator's HTTP API (`http://127.0.0.1:<port>`). */
  urlOf(coordinator: string): string;
  /** By node name; a node stopped or killed stays here until started again. */
  nodes: Map<string, ClusterProcess>;
  nodeNames: string[];
  /** The etcd holding the cluster state, when started with `etcd`. */
  etcd: EtcdCluster | undefined;
  /** Start (or restart, same name and data directory, and the options it was first given) a node; resolves once every running coordinator it joins shows it active. */
  startNode(name: string, options?: NodeStartOptions): Promise<ClusterProcess>;
  /** SIGTERM each coordinator in turn and start it again on the same data directory and RPC port; resolves once every running node is back. */
  restartCoordinator(): Promise<void>;
  /** Start a coordinator that was stopped or killed again, on its data directory and RPC port; resolves once every running node is back. */
  startCoordinator(name: string): Promise<void>;
  /** Until `/.nodes` of every running coordinator shows each of `names` it is joined by with `active` = `active`. */
  waitForNodes(names: string[], active?: boolean, timeoutMs?: number): Promise<Array<Record<string, unknown>>>;
  /** The cluster state as stored: `cluster-state.json` of the coordinator, or the etcd key. */
  storedState(): Promise<ClusterState>;
  /** Which coordinator each running coordinator says is elected, as its `/.nodes` lists it (the one coordinator leads itself). */
  leaders(): Promise<string[]>;
}

/** How one node is started (by default as every node of the cluster). */
export interface NodeStartOptions {
  /** The coordinators it joins, by name (default: every one). */
  join?: string[];
  /** Keep a lease in the cluster's etcd (`--etcd`, `--node-lease-ms`); default: ClusterOptions.nodeEtcd. */
  etcd?: boolean;
}

/** The etcd of a cluster started with `etcd`, and its key prefix. */
export interface EtcdCluster {
  endpoint: string;
  prefix: string;
  /** Stop etcd and start it again on the same data directory and endpoint. */
  restart(): Promise<void>;
}

export interface ClusterOptions {
  nodes?: number;
  /** Coordinators (default 1); more than one needs `etcd`. */
  coordinators?: number;
  /** Keep the cluster state in a real etcd (scripts/etcd.mjs) started under the data directory. */
  etcd?: boolean;
  /** With `etcd`: each coordinator's lease, ms (`--coordinator-lease-ms`). */
  coordinatorLeaseMs?: number;
  /** With `etcd`: nodes keep a lease there (`tessera node --etcd`). */
  nodeEtcd?: boolean;
  /** Their lease, ms (`--node-lease-ms`, default 2000 here). */
  nodeLeaseMs?: number;
  /** Root of the data directories (`coordinator/`, `node1/`…); a new temporary one by default. */
  dataDir?: string;
  /** More coordinator flags. */
  coordinatorArgs?: string[];
  env?: Record<string, string>;
}

const START_TIMEOUT_MS = 30_000;
/** The etcd key prefix of a test cluster. */
export const ETCD_TEST_PREFIX = '/tessera-test';

interface EtcdProcess { endpoint: string; stop(): Promise<void> }
interface EtcdScript { startEtcd(options: { dataDir: string }): Promise<EtcdProcess> }

/** A single-member etcd on loopback (scripts/etcd.mjs) keeping its data under `dataDir`. */
export async function startEtcd(dataDir: string): Promise<EtcdProcess> {
  const script = (await import(pathToFileURL(join(REPO_ROOT, 'scripts/etcd.mjs')).href)) as EtcdScript;
  return script.startEtcd({ dataDir });
}

const alive = (p: ClusterProcess) => p.process.exitCode === null && p.process.signalCode === null;

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const dataDir = options.dataDir ?? tempDataDir('tessera-cluster-');
  const nodeNames = Array.from({ length: options.nodes ?? 3 }, (_, i) => `node${i + 1}`);
  const count = options.coordinators ?? 1;
  if (count > 1 && options.etcd !== true) throw new Error('several coordinators share the cluster state through etcd: pass etcd: true');
  const coordinatorNames = count === 1 ? ['coordinator'] : Array.from({ length: count }, (_, i) => `c${i + 1}`);
  const env = { TESSERA_LOG_LEVEL: 'info', ...options.env };
  let etcdProcess = options.etcd === true ? await startEtcd(join(dataDir, 'etcd')) : undefined;
  const etcdArgs = (name: string) => (etcdProcess === undefined ? [] : ['--name', name, '--etcd', etcdProcess.endpoint, '--etcd-prefix', ETCD_TEST_PREFIX,
    '--coordinator-lease-ms', String(options.coordinatorLeaseMs ?? 2_000)]);
  const coordinatorArgs = (name: string, rpcPort: number) => ['coordinator', '--port', '0', '--rpc-port', String(rpcPort),
    '--data', join(dataDir, name), ...etcdArgs(name), ...(options.coordinatorArgs ?? [])];

  const coordinators = new Map<string, ClusterProcess>();
  const listening = (proc: ClusterProcess) => proc.logs.find((l) => l.msg === 'listening') as { port: number; rpcPort: number };
  const ports = new Map<string, { port: number; rpcPort: number }>();
  const spawnCoordinator = async (name: string, rpcPort: number) => {
    const proc = await spawnTessera(name, coordinatorArgs(name, rpcPort), env, 'listening');
    coordinators.set(name, proc);
    ports.set(name, listening(proc));
  };
  const nodes = new Map<string, ClusterProcess>();
  const nodeStarts = new Map<string, NodeStartOptions>();
  const joins = (node: string, coordinator: string) => nodeStarts.get(node)?.join?.includes(coordinator) ?? true;
  const urlOf = (name: string) => `http://127.0.0.1:${ports.get(name)!.port}`;
  const running = () => coordinatorNames.filter((n) => alive(coordinators.get(n)!));
  let turn = 0;
  const first = () => ports.get(coordinatorNames[0]!)!;

  const cluster: Cluster = {
    get port() { return first().port; },
    // Several coordinators: each request goes to the next running one.
    get url() {
      const up = running();
      return urlOf(up.length === 0 ? coordinatorNames[0]! : up[turn++ % up.length]!);
    },
    get rpcPort() { return first().rpcPort; },
    get rpcUrl() { return coordinatorNames.map((n) => `ws://127.0.0.1:${ports.get(n)!.rpcPort}`).join(','); },
    get coordinator() { return coordinators.get(coordinatorNames[0]!)!; },
    get process() { return cluster.coordinator.process; },
    get logs() { return cluster.coordinator.logs; },
    coordinators,
    urlOf,
    dataDir,
    nodes,
    nodeNames,
    etcd: etcdProcess === undefined ? undefined : {
      get endpoint() { return etcdProcess!.endpoint; },
      prefix: ETCD_TEST_PREFIX,
      async restart() {
        await etcdProcess!.stop();
        etcdProcess = await startEtcd(join(dataDir, 'etcd'));
      },
    },
    // Any coordinator's line (one stopped keeps its lines).
    waitForLog: (match, timeoutMs) => (coordinators.size === 1
      ? cluster.coordinator.waitForLog(match, timeoutMs)
      : Promise.any([...coordinators.values()].map((c) => c.waitForLog(match, timeoutMs)))),
    async startNode(name, given) {
      const known = nodes.get(name);
      if (known !== undefined && alive(known)) throw new Error(`${name} is running`);
      const start = given ?? nodeStarts.get(name) ?? {};
      nodeStarts.set(name, start);
      const joinUrl = start.join === undefined ? cluster.rpcUrl : start.join.map((n) => `ws://127.0.0.1:${ports.get(n)!.rpcPort}`).join(',');
      const leaseArgs = etcdProcess !== undefined && (start.etcd ?? options.nodeEtcd === true)
        ? ['--etcd', etcdProcess.endpoint, '--etcd-prefix', ETCD_TEST_PREFIX, '--node-lease-ms', String(options.nodeLeaseMs ?? 2_000)] : [];
      // With etcd, writes go straight to the primaries, which relay them to their replicas over their relay listeners.
      const relayArgs = etcdProcess === undefined ? [] : ['--relay-port', '0'];
      const proc = await spawnTessera(name, ['node', '--join', joinUrl, '--name', name, '--data', join(dataDir, name), ...leaseArgs, ...relayArgs], env, 'joining');
      nodes.set(name, proc);
      await cluster.waitForNodes([name]);
      return proc;
    },
    async restartCoordinator() {
      for (const name of coordinatorNames) {
        const code = await coordinators.get(name)!.stop();
        if (code !== 0) throw new Error(`coordinator ${name} exited with ${code}`);
        await cluster.startCoordinator(name);
      }
    },
    async startCoordinator(name) {
      if (alive(coordinators.get(name)!)) throw new Error(`${name} is running`);
      // The same RPC port: the nodes redial the address they were given.
      await spawnCoordinator(name, ports.get(name)!.rpcPort);
      await cluster.waitForNodes([...nodes].filter(([, p]) => alive(p)).map(([n]) => n));
    },
    async waitForNodes(names, active = true, timeoutMs = START_TIMEOUT_MS) {
      const deadline = Date.now() + timeoutMs;
      let list: Array<Record<string, unknown>> = [];
      // Each running coordinator; with none running, the calls fail until the timeout (as they would anyway).
      const up = running();
      for (const coordinator of up.length > 0 ? up : coordinatorNames) {
        const joined = names.filter((n) => joins(n, coordinator));
        for (;;) {
          const r = await call({ url: urlOf(coordinator) }, 'GET', '/.nodes').catch(() => undefined);
          list = (r?.status === 200 ? r.json : []) as Array<Record<string, unknown>>;
          if (joined.every((n) => list.some((e) => e.name === n && e.active === active))) break;
          if (Date.now() > deadline) throw new Error(`nodes ${names.join(', ')} not ${active ? 'active' : 'inactive'} on ${coordinator} in ${timeoutMs} ms: ${JSON.stringify(list)}`);
          await new Promise((res) => setTimeout(res, 50));
        }
      }
      return list;
    },
    async storedState() {
      if (etcdProcess === undefined) return readLocalState<ClusterState>(join(dataDir, 'coordinator', 'cluster-state.json'), EMPTY_CLUSTER_STATE);
      const client = new Etcd3({ hosts: etcdProcess.endpoint });
      try {
        const value = await client.get(`${ETCD_TEST_PREFIX}/state`).string();
        return (value === null ? { nodes: {}, indexes: {} } : JSON.parse(value)) as ClusterState;
      } finally {
        client.close();
      }
    },
    async leaders() {
      const out: string[] = [];
      for (const name of running()) {
        const listed = await call({ url: urlOf(name) }, 'GET', '/.nodes').catch(() => undefined);
        const leader = (listed?.json as Array<{ name: string; role: string; leader: boolean }> | undefined)?.find((n) => n.role === 'coordinator' && n.leader);
        if (leader !== undefined) out.push(leader.name);
      }
      return out;
    },
    async stop() {
      // All at once, as an orchestrator would; the first non-zero exit code wins. etcd last.
      const codes = await Promise.all([...coordinators.values(), ...nodes.values()].map((p) => p.stop()));
      await etcdProcess?.stop();
      return codes.find((c) => c !== 0) ?? 0;
    },
    async kill() {
      await Promise.all([...coordinators.values(), ...nodes.values()].map((p) => p.kill()));
      await etcdProcess?.stop();
    },
  };
  try {
    for (const name of coordinatorNames) await spawnCoordinator(name, 0);
    await Promise.all(nodeNames.map((name) => cluster.startNode(name)));
    if (etcdProcess !== undefined) await until('one coordinator elected', async () => ((await cluster.leaders()).length === coordinatorNames.length ? true : undefined));
  } catch (err) {
    await cluster.kill();
    throw err;
  }
  return cluster;
}

/** Polls `probe` every 100 ms until it gives a value (a throw counts as none, and the last one is told on timeout); rejects after `timeoutMs`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const value = await probe().catch((err: unknown) => { last = `; last: ${err instanceof Error ? err.message : String(err)}`; return undefined; });
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * etcd's history of the cluster state, revision by revision: every primary
 * each shard's term named (`<uuid>#<shard>@<term>` → node), and the terms
 * that named two (must be none).
 */
export async function primaryTermHistory(etcd: EtcdCluster): Promise<{ primaries: Map<string, string>; conflicts: string[] }> {
  const client = new Etcd3({ hosts: etcd.endpoint });
  try {
    const key = `${etcd.prefix}/state`;
    const latest = await client.get(key).exec();
    const last = Number(latest.kvs[0]!.mod_revision);
    const primaries = new Map<string, string>();
    const conflicts: string[] = [];
    for (let revision = 1; revision <= last; revision++) {
      const at = await client.get(key).revision(revision).exec().catch(() => undefined);
      const kv = at?.kvs[0];
      if (kv === undefined || Number(kv.mod_revision) !== revision) continue;
      const state = JSON.parse(kv.value.toString()) as ClusterState;
      for (const meta of Object.values(state.indexes)) {
        meta.allocation.forEach((copies, i) => {
          const slot = `${meta.uuid}#${i + 1}@${meta.replication?.[i]?.term ?? 1}`;
          const primary = copies[0] ?? '';
          const earlier = primaries.get(slot);
          if (earlier !== undefined && earlier !== primary) conflicts.push(`${slot}: ${earlier} and ${primary}`);
          primaries.set(slot, primary);
        });
      }
    }
    return { primaries, conflicts };
  } finally {
    client.close();
  }
}

/** Spawn `tessera <args>`; resolves once it logs `readyMsg`. */
export async function spawnTessera(name: string, args: string[], env: Record<string, string>, readyMsg: string): Promise<ClusterProcess> {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: Array<Record<string, unknown>> = [];
  const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
  const lines = createInterface({ input: child.stdout! });
  lines.on('line', (line) => {
    try { logs.push(JSON.parse(line) as Record<string, unknown>); } catch { /* not a log line */ }
  });
  const alive = () => child.exitCode === null && child.signalCode === null;
  const proc: ClusterProcess = {
    name,
    process: child,
    logs,
    exited,
    async stop() {
      if (alive()) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (alive()) child.kill('SIGKILL');
      await exited;
    },
    async waitForLog(match, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = logs.find(match);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`${name}: log line not seen`);
        await new Promise((res) => setTimeout(res, 20));
      }
    },
  };
  await Promise.race([
    proc.waitForLog((l) => l.msg === readyMsg, START_TIMEOUT_MS),
    exited.then((code) => { throw new Error(`${name} exited with ${code} before '${readyMsg}'; stderr: ${stderr}`); }),
  ]);
  return proc;
}

export type ServerKind = 'embedded' | 'cluster';

/** The servers the integration suites run against: TESSERA_TEST_SERVERS (`embedded,cluster`), both by default. */
export const SERVER_KINDS: ServerKind[] = (() => {
  const given = (process.env.TESSERA_TEST_SERVERS ?? 'embedded,cluster').split(',').map((k) => k.trim()).filter((k) => k.length > 0);
  for (const kind of given) if (kind !== 'embedded' && kind !== 'cluster') throw new Error(`TESSERA_TEST_SERVERS: unknown server kind '${kind}'`);
  return given as ServerKind[];
})();

/** A fresh embedded server, or a coordinator with 3 nodes, on `dataDir` (a new temporary one by default). */
export function startServers(kind: ServerKind, options: { dataDir?: string } = {}): Promise<Server> {
  if (kind === 'cluster') return startCluster({ nodes: 3, ...options });
  const dataDir = options.dataDir ?? tempDataDir();
  return startServer({ dataDir, args: ['--port', '0', '--data', dataDir] });
}

/**
 * The servers of `kind` for the tests of the enclosing `describe`: started
 * before them, stopped after (a clean exit is asserted) with their data
 * directory removed. Read the server through the returned function.
 */
export function serversForSuite(kind: ServerKind): () => Server {
  let server: Server | undefined;
  beforeAll(async () => {
    server = await startServers(kind);
  }, 60_000);
  afterAll(async () => {
    if (server === undefined) return;
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });
  return () => {
    if (server === undefined) throw new Error(`the ${kind} servers did not start`);
    return server;
  };
}
