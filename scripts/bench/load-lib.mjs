// What the HTTP load benchmarks share (cluster.mjs, shard-workers.mjs):
// autocannon runs that Ctrl-C can stop, PUTs of small documents with
// distinct IDs, the SEARCH load, index creation and Markdown tables.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

export const JSON_HEADERS = { 'content-type': 'application/json' };

/** The autocannon run in progress, stopped by `stopLoad` (Ctrl-C). */
let current;

/** One autocannon run of `connections` connections; resolves with its result. */
export function runLoad(connections, options) {
  return new Promise((res, rej) => {
    current = autocannon({ connections, ...options }, (err, result) => {
      current = undefined;
      if (err) rej(err);
      else res(result);
    });
  });
}

export function stopLoad() {
  current?.stop();
}

/** A small document: a title, a colour (red one time in four) and a number. */
export function smallDocument(i) {
  return JSON.stringify({ title: `document ${i}`, colour: i % 4 === 0 ? 'red' : 'blue', n: i });
}

/** PUTs of distinct IDs: `duration` seconds, or exactly `amount` requests; `url` may be a list (connection i → url[i mod n]). */
export function putLoad(connections, url, index, prefix, limits) {
  let next = 0;
  return runLoad(connections, {
    url, ...limits,
    requests: [{ method: 'PUT', headers: JSON_HEADERS, setupRequest: (req) => {
      const i = next++;
      return { ...req, path: `${index}${prefix}${i}`, body: smallDocument(i) };
    } }],
  });
}

/** SEARCH {colour: red}, _limit 10 on `urls` (each an index URL) for `duration` seconds. */
export function searchLoad(connections, urls, duration) {
  // autocannon sends only standard methods: SEARCH goes as the API's method override.
  return runLoad(connections, {
    url: urls, duration, method: 'POST', headers: { ...JSON_HEADERS, 'x-http-method-override': 'SEARCH' },
    body: JSON.stringify({ _query: { colour: 'red' }, _limit: 10 }),
  });
}

/**
 * Create an index; with `schemaFields`, its schema declares that many more
 * fields (text, keyword, integer in turn) that the documents never use: the
 * schema every shard call names or carries grows as a real index's does.
 */
export async function createIndex(url, path, shards, replicas, schemaFields = 0) {
  const body = { _settings: { number_of_shards: shards, number_of_replicas: replicas } };
  if (schemaFields > 0) {
    const types = ['text', 'keyword', 'integer'];
    body._schema = Object.fromEntries(Array.from({ length: schemaFields }, (_, i) => [`declared_${i}`, { _type: types[i % types.length] }]));
  }
  const res = await fetch(`${url}${path}`, { method: 'PUT', headers: JSON_HEADERS, body: JSON.stringify(body) });
  if (res.status !== 200) throw new Error(`PUT ${path}: ${res.status} ${await res.text()}`);
}

/** Clock ticks per second of /proc/PID/stat's utime and stime (USER_HZ: 100 on every Linux Node.js runs on). */
const CLOCK_TICKS_PER_S = 100;

/**
 * CPU seconds (user + system) process `pid` has used so far — or its thread
 * `tid` alone (the main thread's is the pid) —; 0 once it is gone or off Linux.
 */
export function cpuSeconds(pid, tid) {
  try {
    // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are the 12th and 13th.
    const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S;
  } catch {
    return 0;
  }
}

/** Read and write system calls (socket I/O included) process `pid` has made so far (/proc/PID/io); 0 once it is gone or off Linux. */
export function ioSyscalls(pid) {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    return Number(/^syscr: (\d+)/m.exec(io)?.[1] ?? 0) + Number(/^syscw: (\d+)/m.exec(io)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Throughput and latency of an autocannon result, and its failures. */
export function loadFigures(result) {
  const failed = result.non2xx + result.errors + result.timeouts;
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, requests: result.requests.total, failed };
}

/** A Markdown table of string cells, columns padded. */
export function markdownTable(head, body) {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => row[i].length)));
  const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}

/** Ctrl-C (once) stops the load and then `stop()` (the processes started), exit 130; SIGTERM does the same, exit 143. */
export function stopOnInterrupt(stop) {
  let interrupted = false;
  process.on('SIGINT', () => {
    if (interrupted) return;
    interrupted = true;
    stopLoad();
    process.stderr.write('\ninterrupted: stopping every process started\n');
    void stop().finally(() => process.exit(130));
  });
  process.on('SIGTERM', () => void stop().finally(() => process.exit(143)));
  return () => interrupted;
}
