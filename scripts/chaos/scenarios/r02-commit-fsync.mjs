// R2 — every acknowledgement of a `?commit` write comes after an fsync of what it wrote.
//
// Method: `tessera serve` runs under `strace -f` (every thread; strace is
// installed with apt-get when missing and this runs as root, as in CI),
// tracing writes, socket sends and fsync/fdatasync with each descriptor's
// path (`-yy`) and the bytes written (`-s`). 8 clients send PUTs and
// UPDATEs to a one-shard index (so concurrent writes share LevelDB batches,
// `?commit` ones with others), half of them with `?commit`, each with a
// unique tag in its body.
// Then the trace, in the order strace saw the calls, is matched: for each
// acknowledged `?commit` write, the server's write of its 2xx answer on the
// client's socket (found by the tag the answer echoes), the last write of
// the tag into a log file before it — a LevelDB log, or the node's commit log
// (`#commit-log/commit-NNNNNN.log`, engine store/commit-log.ts), which a
// `?commit` batch is appended to after its unsynced LevelDB write — and an
// fsync/fdatasync of that same file that started after that write and
// finished before the answer was written. Ordered = all three found in that
// order.
// Quick: 8 clients × 10 writes; full: 8 clients × 1,000 writes.
import { spawnSync } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { aptInstall } from '../../apt-install.mjs';
import { keepAliveAgent, random, request, startServer } from '../lib.mjs';

export const id = 'R2';
export const title = 'every acknowledgement of a `?commit` write is preceded by fdatasync/fsync of what it wrote (strace)';
export const target = '100 % ordered';

const CLIENTS = 8;
const INDEX = 'synced';
const WRITES = new Set(['write', 'writev', 'pwrite64', 'pwritev', 'sendto', 'sendmsg']);
const SYNCS = new Set(['fsync', 'fdatasync']);

function ensureStrace() {
  if (spawnSync('strace', ['-V']).status === 0) return;
  aptInstall('strace', 'strace');
}

/**
 * The traced calls, in the order strace saw them: { name, path, data,
 * start, end, ok } with `start`/`end` the line numbers of the call's entry
 * and exit (the same line unless it was interrupted by another thread's).
 */
async function readTrace(file) {
  const calls = [];
  const pending = new Map(); // pid → call started, not finished
  let line = 0;
  for await (const text of createInterface({ input: createReadStream(file, 'latin1'), crlfDelay: Infinity })) {
    line++;
    const m = /^(\d+)\s+\S+\s+(.*)$/.exec(text);
    if (m === null) continue;
    const [, pid, rest] = m;
    const resumed = /^<\.\.\. (\w+) resumed>(.*)$/.exec(rest);
    if (resumed !== null) {
      const call = pending.get(pid);
      if (call === undefined || call.name !== resumed[1]) continue;
      pending.delete(pid);
      call.end = line;
      call.ok = !/= -1 /.test(resumed[2]);
      continue;
    }
    const start = /^(\w+)\((\d+)<(TCP:\[[^\]]*\]|[^>]*)>(.*)$/.exec(rest);
    if (start === null || (!WRITES.has(start[1]) && !SYNCS.has(start[1]))) continue;
    const call = { name: start[1], path: start[3], data: start[4], start: line, end: line, ok: true };
    calls.push(call);
    if (rest.endsWith('<unfinished ...>')) pending.set(pid, call);
    else call.ok = !/= -1 /.test(rest);
  }
  return calls;
}

export async function run({ quick, seed, workDir, log }) {
  ensureStrace();
  const perClient = quick ? 10 : 1000;
  const dataDir = join(workDir, 'data');
  const traceFile = join(workDir, 'server.strace');
  const server = await startServer({
    dataDir,
    prefix: ['strace', '-f', '-qq', '-tt', '-yy', '-s', '65536', '-o', traceFile, '-e', `trace=${[...WRITES, ...SYNCS].join(',')}`],
    startTimeoutMs: 120_000,
  });
  const committed = []; // tags of the acknowledged ?commit writes
  try {
    const created = await request(server.port, 'PUT', `/${INDEX}/`, { _settings: { number_of_shards: 1 } });
    if (created.status !== 200 && created.status !== 201) throw new Error(`creating /${INDEX}/: ${created.status} ${created.text}`);
    await Promise.all(Array.from({ length: CLIENTS }, async (_, client) => {
      const rand = random(seed * 7 + client);
      const agent = keepAliveAgent();
      try {
        for (let i = 0; i < perClient; i++) {
          const key = `c${client}k${Math.floor(rand() * 10)}`;
          const commit = i % 2 === 0;
          const tag = `r2s${seed}c${client}n${i}z`;
          const method = rand() < 0.5 ? 'UPDATE' : 'PUT';
          const answer = await request(server.port, method, `/${INDEX}/${key}?${commit ? 'commit&' : ''}upsert`, { tag, client }, { agent, timeoutMs: 60_000 });
          if (answer.status !== 200) throw new Error(`${method} ${key}: ${answer.status} ${answer.text}`);
          if (commit) committed.push(tag);
        }
      } finally {
        agent.destroy();
      }
    }));
  } finally {
    const exit = await server.stop(30_000);
    log(`server exited ${exit.code ?? exit.signal}; ${committed.length} ?commit writes acknowledged; reading ${traceFile}`);
  }
  const calls = await readTrace(traceFile);
  const logWrites = calls.filter((c) => WRITES.has(c.name) && c.path.startsWith(dataDir) && c.path.endsWith('.log'));
  const answers = calls.filter((c) => WRITES.has(c.name) && c.path.startsWith('TCP:') && c.data.includes('HTTP/1.1 2'));
  const syncs = calls.filter((c) => SYNCS.has(c.name) && c.ok);
  let ordered = 0;
  const failures = [];
  for (const tag of committed) {
    const answer = answers.find((c) => c.data.includes(tag));
    const written = answer === undefined ? undefined : logWrites.filter((c) => c.end < answer.start && c.data.includes(tag)).at(-1);
    const synced = written === undefined ? undefined
      : syncs.find((c) => c.path === written.path && c.start > written.end && c.end < answer.start);
    if (synced !== undefined) ordered++;
    else if (failures.length < 10) {
      failures.push(answer === undefined ? `${tag}: no answer found in the trace`
        : written === undefined ? `${tag}: answered (trace line ${answer.start}) with no log write of it before`
          : `${tag}: written to ${written.path} (line ${written.end}), answered (line ${answer.start}) with no fsync/fdatasync of that file between`);
    }
  }
  for (const line of failures) log(line);
  log(`${calls.length} traced calls: ${logWrites.length} log writes, ${syncs.length} syncs, ${answers.length} 2xx answers`);
  const total = committed.length;
  return {
    pass: total > 0 && ordered === total,
    figure: `${total === 0 ? 0 : ordered === total ? 100 : ((100 * ordered) / total).toFixed(2)} % ordered: ${ordered} of ${total} acknowledged ?commit writes answered after an fsync/fdatasync of the log they were written to`,
    details: { total, ordered, failures },
  };
}
