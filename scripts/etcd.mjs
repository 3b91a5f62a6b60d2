// A real, single-member etcd on loopback, for tests and local clusters
// (DESIGN.md: several coordinators share the cluster state through etcd).
//
//   const bin = await ensureEtcd();            // finds /usr/bin/etcd, or installs Debian's etcd-server as root
//   const etcd = await startEtcd({ dataDir }); // free loopback ports, resolves once it answers /health
//   … etcd.endpoint (http://127.0.0.1:PORT) …
//   await etcd.stop();                          // SIGTERM, resolves at exit; startEtcd({ dataDir }) again restarts it
//
// The ports of a data directory are kept in `<dataDir>/ports.json`, so a
// restart on the same directory answers on the same endpoint (clients
// reconnect). etcd logs to `<dataDir>/etcd.log`. Requests may carry up to
// 32 MiB (`--max-request-bytes`; etcd's default, 1.5 MiB, is too small for a
// big cluster state, which is one key). `detached: true` gives etcd a process
// group of its own (scripts/cluster: Ctrl-C reaches only the script, which
// stops etcd last, once the coordinators have revoked their leases).
import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, openSync, closeSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { aptInstall } from './apt-install.mjs';

/** The largest request etcd accepts from us (one cluster-state document). */
export const ETCD_MAX_REQUEST_BYTES = 32 * 1024 * 1024;
/** etcd must answer /health within this after its start. */
const START_TIMEOUT_MS = 30_000;
/** After SIGTERM, etcd is killed if still running after this. */
const STOP_TIMEOUT_MS = 10_000;
const DEBIAN_PACKAGE = 'etcd-server';

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function findEtcd() {
  const candidates = [process.env.ETCD_BIN, '/usr/bin/etcd', ...(process.env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, 'etcd'))];
  return candidates.find((path) => path !== undefined && path !== '' && isExecutable(path));
}

/**
 * The path of the etcd binary ($ETCD_BIN, /usr/bin/etcd, or on PATH). When
 * there is none and this process is root, installs Debian's `etcd-server`
 * with apt-get (printing what it does on stderr); otherwise throws, naming
 * the package to install.
 */
export async function ensureEtcd() {
  const found = findEtcd();
  if (found !== undefined) return found;
  aptInstall(DEBIAN_PACKAGE, 'etcd ($ETCD_BIN, /usr/bin/etcd or PATH)');
  const installed = findEtcd();
  if (installed === undefined) throw new Error(`${DEBIAN_PACKAGE} installed, but no etcd binary found at /usr/bin/etcd`);
  return installed;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The ports a data directory used before, else the ones asked for, else free ones; remembered for the next start. */
async function portsOf(dataDir, clientPort, peerPort) {
  const file = join(dataDir, 'ports.json');
  const before = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  const ports = {
    clientPort: clientPort ?? before.clientPort ?? (await freePort()),
    peerPort: peerPort ?? before.peerPort ?? (await freePort()),
  };
  writeFileSync(file, JSON.stringify(ports) + '\n');
  return ports;
}

function delay(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function logTail(logFile) {
  try {
    return readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * Starts etcd on `dataDir` (created if missing; the member's data lives in
 * `<dataDir>/member`), listening on 127.0.0.1 only. Resolves once it answers
 * `/health` with `{ endpoint, pid, logFile, exited, stop(), kill() }`: `stop()`
 * sends SIGTERM and `kill()` SIGKILL, each resolving once the process has
 * exited; `exited` resolves with `{ code, signal }` when it exits, however.
 */
export async function startEtcd({ dataDir, clientPort, peerPort, detached = false }) {
  const bin = await ensureEtcd();
  mkdirSync(dataDir, { recursive: true });
  const ports = await portsOf(dataDir, clientPort, peerPort);
  const endpoint = `http://127.0.0.1:${ports.clientPort}`;
  const peerUrl = `http://127.0.0.1:${ports.peerPort}`;
  const logFile = join(dataDir, 'etcd.log');
  const log = openSync(logFile, 'a');
  const child = spawn(bin, [
    '--name', 'tessera',
    '--data-dir', join(dataDir, 'member-data'),
    '--listen-client-urls', endpoint,
    '--advertise-client-urls', endpoint,
    '--listen-peer-urls', peerUrl,
    '--initial-advertise-peer-urls', peerUrl,
    '--initial-cluster', `tessera=${peerUrl}`,
    '--initial-cluster-state', 'new',
    '--max-request-bytes', String(ETCD_MAX_REQUEST_BYTES),
    '--logger', 'zap',
    '--log-outputs', 'stderr',
  ], { stdio: ['ignore', log, log], detached });
  closeSync(log);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let exit;
  void exited.then((status) => { exit = status; });

  const end = async (signal) => {
    if (exit === undefined) child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };

  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (exit !== undefined) throw new Error(`etcd exited at start (${exit.signal ?? `code ${exit.code}`}); ${logFile}:\n${logTail(logFile)}`);
    try {
      const res = await fetch(`${endpoint}/health`, { signal: AbortSignal.timeout(1000) });
      const body = await res.json();
      if (body.health === 'true') break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      await end('SIGKILL');
      throw new Error(`etcd did not answer ${endpoint}/health within ${START_TIMEOUT_MS} ms; ${logFile}:\n${logTail(logFile)}`);
    }
    await delay(50);
  }
  return {
    endpoint,
    pid: child.pid,
    logFile,
    exited,
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
  };
}
