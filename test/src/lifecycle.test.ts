/**
 * Nothing lost, nothing surprising (issue 18): real processes, real files,
 * real sockets. A data directory has one process at a time; a log reader that
 * goes away costs log lines, never the server; `npm start` and `npm run
 * cluster` pass a signal on to the servers, which stop cleanly; the local
 * cluster outlives one of its nodes.
 *
 * Every process started here is killed at the end of its test, passed or
 * not (`track`), and every wait is bounded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parsePrometheusText, valueOf } from './prometheus-text.js';
import { call, CLI, REPO_ROOT, removeDir, startServer, tempDataDir, type Server } from './harness.js';

/** Processes (or process groups, as negative pids) to SIGKILL after the test. */
const tracked: number[] = [];
const dirs: string[] = [];

function track(pid: number | undefined): void {
  if (pid !== undefined) tracked.push(pid);
}

afterEach(() => {
  for (const pid of tracked.splice(0)) {
    // A single process only while it is still one of ours (its data directory is one of this file's), not a pid reused since.
    if (pid > 0 && !isOurs(pid)) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  for (const dir of dirs.splice(0)) removeDir(dir);
});

const DIR_PREFIX = 'tessera-life-';

function isOurs(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(DIR_PREFIX);
  } catch {
    return false;
  }
}

function dataDir(): string {
  const dir = tempDataDir(DIR_PREFIX);
  dirs.push(dir);
  return dir;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Polls `condition` every 50 ms until it holds; fails after `timeoutMs`. */
async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Pids of the processes whose command line mentions `text` (Linux /proc), but `except`: what a test left
 * behind, if anything. The whole line is searched, as a server's title ('tessera serve …') replaces its argv.
 */
function pidsMentioning(text: string, except: Array<number | undefined> = []): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!except.includes(Number(name)) && readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(text)) pids.push(Number(name));
    } catch {
      // Ended meanwhile.
    }
  }
  return pids;
}

interface Running {
  child: ChildProcess;
  /** Standard output and error lines so far. */
  lines: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The first line matching, waiting up to `timeoutMs` for it. */
  line(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
}

/** Start a command (its own process group, killed after the test) and collect its lines. */
function run(command: string, args: string[], options: { env?: Record<string, string> } = {}): Running {
  const child = spawn(command, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  track(child.pid === undefined ? undefined : -child.pid);
  const lines: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) createInterface({ input: stream }).on('line', (l) => lines.push(l));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  return {
    child,
    lines,
    exited,
    async line(match, timeoutMs = 30_000) {
      let found: string | undefined;
      await waitFor(`a line of ${command} ${args.join(' ')} (have: ${lines.slice(-5).join(' | ')})`, () => {
        found = lines.find(match);
        return found !== undefined;
      }, timeoutMs);
      return found as string;
    },
  };
}

/** Resolves with `promise`, or fails after `timeoutMs`. */
function within<T>(what: string, promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: not within ${timeoutMs} ms`)), timeoutMs); }),
  ]);
}

const json = (line: string): Record<string, unknown> => {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return {};
  }
};

/** The bytes of a data directory's cluster state: the local store's base and its log of changes since. */
function stateFiles(dir: string): { base: Buffer; log: Buffer } {
  return { base: readFileSync(join(dir, 'cluster-state.json')), log: readFileSync(join(dir, 'cluster-state.json.log')) };
}

describe('one process per data directory', () => {
  let first: Server | undefined;
  afterEach(async () => {
    await first?.kill();
    first = undefined;
  });

  it('a second serve on a data directory in use exits non-zero within seconds, naming the holder, and writes nothing', async () => {
    const dir = dataDir();
    first = await startServer({ dataDir: dir });
    expect((await call(first, 'PUT', '/mine/1?commit=true', { a: 1 })).status).toBe(200);
    const state = stateFiles(dir);
    // The index's creation went to the log (the base is rewritten only once the log outgrows it): both are compared.
    expect(state.log.length).toBeGreaterThan(0);

    const second = run(process.execPath, [CLI, 'serve', '--port', '0', '--data', dir]);
    const { code } = await within('the second server exits', second.exited, 15_000);
    expect(code).not.toBe(0);
    const refused = second.lines.map(json).find((l) => l.msg === 'could not start');
    const err = refused?.err as { code?: string; message?: string } | undefined;
    expect(err?.code).toBe('directory_locked');
    expect(err?.message).toContain(`pid ${first.process.pid} on ${hostname()}`);
    expect(second.lines.map(json).some((l) => l.msg === 'listening')).toBe(false);

    // Nothing changed, and the first server goes on.
    expect(stateFiles(dir)).toEqual(state);
    expect((await call(first, 'GET', '/mine/1')).json.a).toBe(1);
    expect((await call(first, 'GET', '/readyz')).status).toBe(200);
  });

  it('the lock dies with its process: after kill -9 the directory starts again at once', async () => {
    const dir = dataDir();
    first = await startServer({ dataDir: dir });
    expect((await call(first, 'PUT', '/mine/1', { a: 1 })).status).toBe(200);
    await first.kill();
    first = await startServer({ dataDir: dir });
    expect((await call(first, 'GET', '/mine/1')).json.a).toBe(1);
  });

  it('a coordinator, and a node, on a directory in use are refused the same way', async () => {
    const dir = dataDir();
    const coordinatorArgs = [CLI, 'coordinator', '--port', '0', '--rpc-port', '0', '--data', join(dir, 'coordinator')];
    const coordinator = run(process.execPath, coordinatorArgs);
    const listening = json(await coordinator.line((l) => json(l).msg === 'listening'));
    const nodeArgs = [CLI, 'node', '--join', `ws://127.0.0.1:${String(listening.rpcPort)}`, '--name', 'n1', '--data', join(dir, 'n1')];
    const node = run(process.execPath, nodeArgs);
    await node.line((l) => json(l).msg === 'joining');

    for (const [args, holder] of [[coordinatorArgs, coordinator], [nodeArgs, node]] as const) {
      const again = run(process.execPath, args);
      const { code } = await within('the second process exits', again.exited, 15_000);
      expect(code).not.toBe(0);
      const err = again.lines.map(json).find((l) => l.msg === 'could not start')?.err as { code?: string; message?: string } | undefined;
      expect(err?.code).toBe('directory_locked');
      expect(err?.message).toContain(`pid ${holder.child.pid}`);
      expect(alive(holder.child.pid!)).toBe(true);
    }
    // And a node may not take the node directory of an embedded server.
    const embedded = dataDir();
    first = await startServer({ dataDir: embedded });
    const intruder = run(process.execPath, [CLI, 'node', '--join', `ws://127.0.0.1:${String(listening.rpcPort)}`, '--name', 'node1', '--data', embedded]);
    expect((await within('the node exits', intruder.exited, 15_000)).code).not.toBe(0);
    expect(intruder.lines.join('\n')).toContain(`pid ${first.process.pid}`);
  });
});

describe('a log reader that goes away', () => {
  it('spawnSync with a timeout (which closes the pipe as it sends SIGTERM) returns, and the server is gone', async () => {
    const dir = dataDir();
    // spawnSync blocks its caller: it runs in a child, so that a hang fails this test instead of freezing it.
    const script = `
      const { spawnSync } = require('node:child_process');
      const r = spawnSync(process.execPath, [${JSON.stringify(CLI)}, 'serve', '--port', '0', '--data', ${JSON.stringify(dir)}], { timeout: 4000 });
      process.stdout.write(JSON.stringify({ status: r.status, signal: r.signal, error: r.error && r.error.code }) + '\\n');`;
    const caller = run(process.execPath, ['-e', script]);
    try {
      const { code } = await within('spawnSync returns', caller.exited, 30_000);
      expect(code).toBe(0);
    } finally {
      for (const pid of pidsMentioning(dir, [caller.child.pid])) track(pid);
    }
    const result = json(caller.lines[0] ?? '');
    expect(result.error).toBe('ETIMEDOUT');
    expect(pidsMentioning(dir, [caller.child.pid])).toEqual([]);
  });

  it('lines that cannot be written are dropped and counted in tessera_log_lines_dropped_total; the server serves on and stops cleanly', async () => {
    // Every request logs (a warn line per request slower than 0 ms).
    const dir = dataDir();
    const server = await startServer({ dataDir: dir, args: ['--port', '0', '--data', dir, '--slow-request-ms', '0'] });
    track(server.process.pid);
    const before = valueOf(parsePrometheusText((await call(server, 'GET', '/:metrics')).text), 'tessera_log_lines_dropped_total');
    expect(before).toBe(0);
    // The reader closes its end: from now on every write to standard output fails with EPIPE.
    server.process.stdout!.destroy();
    for (let i = 0; i < 20; i++) expect((await call(server, 'PUT', `/logs/${i}`, { i })).status).toBe(200);
    await waitFor('dropped lines to be counted', async () =>
      valueOf(parsePrometheusText((await call(server, 'GET', '/:metrics')).text), 'tessera_log_lines_dropped_total') >= 20);
    expect((await call(server, 'GET', '/logs/19')).json.i).toBe(19);
    expect(await within('the server stops', server.stop(), 15_000)).toBe(0);
  });
});

describe('npm start and npm run cluster pass a signal on', () => {
  /** `npm <args>` in its own process group; `ready` picks the line that says it serves. */
  async function npm(args: string[], ready: (line: string) => boolean): Promise<Running> {
    const started = run('npm', args);
    await started.line(ready, 90_000);
    return started;
  }

  it('SIGTERM to `npm start` stops the server gracefully (its stopped line, exit 0): no server is left', async () => {
    const dir = dataDir();
    const started = await npm(['start', '--silent', '--', '--port', '0', '--data', dir], (l) => json(l).msg === 'listening');
    const listening = json(started.lines.find((l) => json(l).msg === 'listening')!);
    const serverPid = listening.pid as number;
    expect(serverPid).toBeGreaterThan(0);
    process.kill(started.child.pid!, 'SIGTERM');
    const { code } = await within('npm exits', started.exited, 30_000);
    await waitFor('the server to be gone', () => !alive(serverPid), 15_000);
    expect(started.lines.map(json).some((l) => l.msg === 'stopped' && l.pid === serverPid)).toBe(true);
    expect(code).toBe(0);
  }, 120_000);

  it('Ctrl-C (SIGINT to the whole process group, which npm forwards again) is one request: a graceful stop, exit 0', async () => {
    const dir = dataDir();
    const started = await npm(['start', '--silent', '--', '--port', '0', '--data', dir], (l) => json(l).msg === 'listening');
    const serverPid = json(started.lines.find((l) => json(l).msg === 'listening')!).pid as number;
    process.kill(-started.child.pid!, 'SIGINT');
    const { code } = await within('npm exits', started.exited, 30_000);
    await waitFor('the server to be gone', () => !alive(serverPid), 15_000);
    const messages = started.lines.map(json).filter((l) => l.pid === serverPid).map((l) => l.msg);
    expect(messages).toContain('stopped');
    expect(messages).not.toContain('second signal: exiting now, without waiting for in-flight requests');
    expect(code).toBe(0);
  }, 120_000);

  it('SIGTERM to `npm run cluster` stops the coordinator and every node gracefully', async () => {
    const dir = dataDir();
    const started = await npm(['run', 'cluster', '--silent', '--', '--nodes', '2', '--port', '0', '--data', dir, '--no-build'],
      (l) => l.startsWith('[cluster] GET /.nodes'));
    const pids = clusterPids(started.lines);
    expect(pids.size).toBe(3);
    // Signalled before it has set up its handlers, a node would just die: wait until both have joined.
    for (const name of ['node1', 'node2']) await started.line((l) => l.startsWith(`[${name}]`) && l.includes('"connected to the coordinator"'));
    process.kill(started.child.pid!, 'SIGTERM');
    const { code } = await within('npm exits', started.exited, 40_000);
    for (const [name, pid] of pids) {
      await waitFor(`${name} to be gone`, () => !alive(pid), 15_000);
      expect(started.lines.some((l) => l.startsWith(`[${name}]`) && json(l.slice(l.indexOf('{'))).msg === 'stopped')).toBe(true);
    }
    expect(code).toBe(0);
  }, 120_000);
});

/**
 * name → pid of the processes a cluster script started, from the lines it prints at start; each is
 * killed after the test (they run in process groups of their own, which the script's kill does not reach).
 */
function clusterPids(lines: string[]): Map<string, number> {
  const pids = new Map<string, number>();
  for (const line of lines) {
    const m = /^\[cluster\] (coordinator\d*|node\d+|etcd)(?::.*)? \(pid (\d+)\)/.exec(line);
    if (m !== null) pids.set(m[1]!, Number(m[2]));
  }
  for (const pid of pids.values()) track(pid);
  return pids;
}

describe('the local cluster (scripts/cluster)', () => {
  const cluster = (dir: string, extra: string[]): Running =>
    run(process.execPath, ['scripts/cluster', '--nodes', '2', '--port', '0', '--data', dir, '--no-build', ...extra]);
  const ready = (l: string) => l.startsWith('[cluster] GET /.nodes');
  const coordinatorUrl = (lines: string[]) => /coordinator: (http:\/\/[^ ]+)/.exec(lines.find((l) => l.startsWith('[cluster] coordinator:'))!)![1]!;
  /** The coordinators' master key: given, or the one the script generated and printed. */
  const KEY = 'lifecycle-test-key-0123456789';
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

  it('starts with --log-level warn, shows no info line, and keeps going when a node dies (the default); generates and prints an API key', async () => {
    const started = cluster(dataDir(), ['--log-level', 'warn']);
    await started.line(ready, 30_000);
    expect(started.lines.filter((l) => json(l.slice(l.indexOf('{'))).level === 30)).toEqual([]);
    const pids = clusterPids(started.lines);
    const url = coordinatorUrl(started.lines);
    const generated = /^\[cluster\] API key \(generated, shown once\): ([0-9a-f]{64}) /.exec(started.lines.find((l) => l.includes('API key'))!)![1]!;
    expect(started.lines.filter((l) => l.includes(generated))).toHaveLength(1);
    expect((await call({ url }, 'GET', '/.nodes')).status).toBe(401);
    await waitFor('both nodes to join', async () => {
      const nodes = (await call({ url }, 'GET', '/.nodes', undefined, bearer(generated))).json as Array<{ name: string; state?: string }>;
      return ['node1', 'node2'].every((n) => JSON.stringify(nodes).includes(`"${n}"`));
    });
    process.kill(pids.get('node1')!, 'SIGKILL');
    await started.line((l) => l.startsWith('[cluster] node1') && l.includes('died unexpectedly'));
    await started.line((l) => l.includes('the others keep running'));
    expect(alive(pids.get('coordinator')!)).toBe(true);
    expect(alive(pids.get('node2')!)).toBe(true);
    expect((await call({ url }, 'GET', '/', undefined, bearer(generated))).status).toBe(200);
    process.kill(started.child.pid!, 'SIGTERM');
    const { code } = await within('the script exits', started.exited, 40_000);
    expect(code).toBe(1); // a node died meanwhile
    expect(alive(pids.get('coordinator')!) || alive(pids.get('node2')!)).toBe(false);
  }, 90_000);

  it('with --stop-on-exit, a node that dies stops the others and the script exits 1', async () => {
    const started = cluster(dataDir(), ['--stop-on-exit']);
    await started.line(ready, 30_000);
    const pids = clusterPids(started.lines);
    for (const name of ['node1', 'node2']) await started.line((l) => l.startsWith(`[${name}]`) && l.includes('"connected to the coordinator"'));
    process.kill(pids.get('node1')!, 'SIGKILL');
    const { code } = await within('the script exits', started.exited, 40_000);
    expect(code).toBe(1);
    expect(started.lines.some((l) => l.startsWith('[cluster] stopping 2 processes'))).toBe(true);
    expect(alive(pids.get('coordinator')!) || alive(pids.get('node2')!)).toBe(false);
  }, 90_000);

  it('with --etcd --coordinators 2: one elected, the nodes registered under leases of their own, a write through one read through the other, SIGTERM stops all and etcd last', async () => {
    const dir = dataDir();
    const started = cluster(dir, ['--etcd', '--coordinators', '2', '--api-key', KEY]);
    await started.line(ready, 60_000);
    const pids = clusterPids(started.lines);
    expect([...pids.keys()].sort()).toEqual(['coordinator1', 'coordinator2', 'etcd', 'node1', 'node2']);
    const urls = ['coordinator1', 'coordinator2'].map((name) =>
      /: (http:\/\/[^ ]+) \(pid/.exec(started.lines.find((l) => l.startsWith(`[cluster] ${name}:`))!)![1]!);
    expect(started.lines.find((l) => l.startsWith('[cluster] etcd:'))).toMatch(/^\[cluster\] etcd: http:\/\/127\.0\.0\.1:\d+ /);
    // Both answer, both name the same elected coordinator, and both see both nodes.
    await waitFor('one coordinator elected, both nodes active', async () => {
      const views = await Promise.all(urls.map(async (url) =>
        (await call({ url }, 'GET', '/.nodes', undefined, bearer(KEY)).catch(() => undefined))?.json as Array<{ name: string; role: string; leader: boolean; active: boolean }> | undefined));
      if (views.some((v) => !Array.isArray(v))) return false;
      const leaders = views.map((v) => v!.filter((n) => n.role === 'coordinator' && n.leader).map((n) => n.name).join());
      return leaders[0] !== '' && leaders[0] === leaders[1] &&
        views.every((v) => ['node1', 'node2'].every((name) => v!.some((n) => n.name === name && n.active)));
    }, 30_000);
    // Each node was given the etcd and keeps its lease there.
    for (const name of ['node1', 'node2']) expect(started.lines.some((l) => l.startsWith(`[${name}]`) && l.includes('registered in etcd under the node\'s lease'))).toBe(true);
    const written = await call({ url: urls[0]! }, 'PUT', '/script/1?commit', { title: 'through coordinator1' }, bearer(KEY));
    expect(written.status).toBe(200);
    expect((await call({ url: urls[1]! }, 'GET', '/script/1')).status).toBe(401);
    const read = await call({ url: urls[1]! }, 'GET', '/script/1', undefined, bearer(KEY));
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({ title: 'through coordinator1' });
    // A key given is never printed, by the script or the coordinators.
    expect(started.lines.filter((l) => l.includes(KEY))).toEqual([]);

    process.kill(started.child.pid!, 'SIGTERM');
    const { code } = await within('the script exits', started.exited, 60_000);
    expect(code).toBe(0);
    for (const [name, pid] of pids) expect([name, alive(pid)]).toEqual([name, false]);
    expect(pidsMentioning(dir)).toEqual([]);
    const stopping = started.lines.findIndex((l) => l.startsWith('[cluster] stopping 4 processes, then etcd'));
    expect(stopping).toBeGreaterThanOrEqual(0);
  }, 120_000);

  it('refuses --coordinators 2 without --etcd', async () => {
    const started = cluster(dataDir(), ['--coordinators', '2']);
    const { code } = await within('the script exits', started.exited, 20_000);
    expect(code).toBe(2);
    expect(started.lines.some((l) => l.includes('--coordinators 2 needs --etcd'))).toBe(true);
  }, 30_000);
});
