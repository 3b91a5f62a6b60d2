/**
 * Cluster harness: a real `tessera coordinator` (HTTP and RPC on ephemeral
 * loopback ports) and N `tessera node` processes joining it, each with its
 * own data directory under one temporary root; waits until every node is
 * active in `/.nodes`. The cluster answers the same `Server` shape as
 * harness.ts (`url`, `stop()`, the coordinator's `logs`…), so an integration
 * suite runs unchanged against either: `startServers(kind)` and
 * SERVER_KINDS (env TESSERA_TEST_SERVERS, default `embedded,cluster`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { call, CLI, removeDir, startServer, tempDataDir, type Server } from './harness.js';

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
  rpcPort: number;
  /** `ws://127.0.0.1:<rpcPort>`, what nodes join. */
  rpcUrl: string;
  coordinator: ClusterProcess;
  /** By node name; a node stopped or killed stays here until started again. */
  nodes: Map<string, ClusterProcess>;
  nodeNames: string[];
  /** Start (or restart, same name and data directory) a node; resolves once the coordinator shows it active. */
  startNode(name: string): Promise<ClusterProcess>;
  /** SIGTERM the coordinator and start it again on the same data directory and RPC port; resolves once every running node is back. */
  restartCoordinator(): Promise<void>;
  /** Until `/.nodes` shows each of `names` with `active` = `active`. */
  waitForNodes(names: string[], active?: boolean, timeoutMs?: number): Promise<Array<Record<string, unknown>>>;
}

export interface ClusterOptions {
  nodes?: number;
  /** Root of the data directories (`coordinator/`, `node1/`…); a new temporary one by default. */
  dataDir?: string;
  /** More coordinator flags. */
  coordinatorArgs?: string[];
  env?: Record<string, string>;
}

const START_TIMEOUT_MS = 30_000;

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const dataDir = options.dataDir ?? tempDataDir('tessera-cluster-');
  const nodeNames = Array.from({ length: options.nodes ?? 3 }, (_, i) => `node${i + 1}`);
  const env = { TESSERA_LOG_LEVEL: 'info', ...options.env };
  const coordinatorArgs = (rpcPort: number) => ['coordinator', '--port', '0', '--rpc-port', String(rpcPort),
    '--data', join(dataDir, 'coordinator'), ...(options.coordinatorArgs ?? [])];

  let coordinator = await spawnTessera('coordinator', coordinatorArgs(0), env, 'listening');
  const listening = (proc: ClusterProcess) => proc.logs.find((l) => l.msg === 'listening') as { port: number; rpcPort: number };
  let { port, rpcPort } = listening(coordinator);
  const nodes = new Map<string, ClusterProcess>();

  const cluster: Cluster = {
    get port() { return port; },
    get url() { return `http://127.0.0.1:${port}`; },
    get rpcPort() { return rpcPort; },
    get rpcUrl() { return `ws://127.0.0.1:${rpcPort}`; },
    get coordinator() { return coordinator; },
    get process() { return coordinator.process; },
    get logs() { return coordinator.logs; },
    dataDir,
    nodes,
    nodeNames,
    waitForLog: (match, timeoutMs) => coordinator.waitForLog(match, timeoutMs),
    async startNode(name) {
      const running = nodes.get(name);
      if (running !== undefined && running.process.exitCode === null && running.process.signalCode === null) throw new Error(`${name} is running`);
      const proc = await spawnTessera(name, ['node', '--join', cluster.rpcUrl, '--name', name, '--data', join(dataDir, name)], env, 'joining');
      nodes.set(name, proc);
      await cluster.waitForNodes([name]);
      return proc;
    },
    async restartCoordinator() {
      const code = await coordinator.stop();
      if (code !== 0) throw new Error(`the coordinator exited with ${code}`);
      // The same RPC port: the nodes redial the address they were given.
      coordinator = await spawnTessera('coordinator', coordinatorArgs(rpcPort), env, 'listening');
      ({ port } = listening(coordinator));
      await cluster.waitForNodes([...nodes].filter(([, p]) => p.process.exitCode === null && p.process.signalCode === null).map(([n]) => n));
    },
    async waitForNodes(names, active = true, timeoutMs = START_TIMEOUT_MS) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const r = await call(cluster, 'GET', '/.nodes').catch(() => undefined);
        const list = (r?.status === 200 ? r.json : []) as Array<Record<string, unknown>>;
        if (names.every((n) => list.some((e) => e.name === n && e.active === active))) return list;
        if (Date.now() > deadline) throw new Error(`nodes ${names.join(', ')} not ${active ? 'active' : 'inactive'} in ${timeoutMs} ms: ${JSON.stringify(list)}`);
        await new Promise((res) => setTimeout(res, 50));
      }
    },
    async stop() {
      // All at once, as an orchestrator would; the first non-zero exit code wins.
      const codes = await Promise.all([coordinator, ...nodes.values()].map((p) => p.stop()));
      return codes.find((c) => c !== 0) ?? 0;
    },
    async kill() {
      await Promise.all([coordinator, ...nodes.values()].map((p) => p.kill()));
    },
  };
  try {
    await Promise.all(nodeNames.map((name) => cluster.startNode(name)));
  } catch (err) {
    await cluster.kill();
    throw err;
  }
  return cluster;
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
