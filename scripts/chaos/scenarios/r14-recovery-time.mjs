// R14 — recovery time after kill -9 with 1,000,000 documents.
//
// Method: a fresh server is loaded through RESTORE (HTTP, NDJSON, 10,000
// small documents a request, two in flight, `echo=false`) with integer
// IDs, then SIGKILLed right after the last batch is acknowledged (nothing
// asked to flush or commit: the newest writes are only in the LevelDB log
// and the operation log to replay). The server is started again on the same
// directory: timed from the spawn, /readyz is polled every 20 ms until it
// answers 200; then one COUNT and one SEARCH for a term must answer at once
// with every document loaded (ready means serving). Figure: ms from the
// spawn to /readyz 200 and to the first search answered; target ready ≤ 10 s.
// Beside them, the CPU seconds the server had used when it was ready (all its
// threads, and its main thread: /proc/PID/stat), which do not grow when other
// work shares the machine, and the RESTORE rate of the load.
// Quick: 20,000 documents, and only the answers are asserted (it runs in
// npm test, beside other tests: its time is printed, not judged); full:
// 1,000,000, and ready must come within 10 s.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request, startServer, waitFor } from '../lib.mjs';

export const id = 'R14';
export const title = 'recovery time after kill -9 with 1,000,000 documents';
export const target = 'ready ≤ 10 s';

const INDEX = '/recovery/';
const BATCH = 10_000;
const WORDS = 1000;
const READY_MS_MAX = 10_000;

/** CPU seconds (user + system) from a /proc stat file: a process's, or one thread's under /proc/PID/task/. */
function cpuSeconds(statFile) {
  const fields = readFileSync(statFile, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function batchBody(from, to) {
  const lines = [];
  for (let i = from; i < to; i++) lines.push(`{"_id":${i + 1},"w":"t${i % WORDS}","n":${i}}`);
  return `${lines.join('\n')}\n`;
}

export async function run({ quick, workDir, log }) {
  const docs = quick ? 20_000 : 1_000_000;
  const dataDir = join(workDir, 'data');
  const loader = await startServer({ dataDir });
  const loadStartedAt = Date.now();
  try {
    let next = 0;
    const sendNext = async () => {
      while (next < docs) {
        const from = next;
        next = Math.min(docs, next + BATCH);
        const answer = await request(loader.port, 'RESTORE', `${INDEX}?echo=false`, batchBody(from, next),
          { headers: { 'content-type': 'application/x-ndjson' }, timeoutMs: 600_000 });
        if (answer.status !== 200) throw new Error(`RESTORE ${from}–${next}: ${answer.status} ${answer.text.slice(0, 300)}`);
        if (next % 100_000 === 0) log(`loaded ${next} of ${docs} in ${((Date.now() - loadStartedAt) / 1000).toFixed(0)} s`);
      }
    };
    await Promise.all([sendNext(), sendNext()]);
    const loadS = (Date.now() - loadStartedAt) / 1000;
    log(`${docs} documents loaded in ${loadS.toFixed(1)} s (RESTORE ${Math.round(docs / loadS)} docs/s, server CPU ${cpuSeconds(`/proc/${loader.serverPid}/stat`).toFixed(1)} s); kill -9`);
  } finally {
    await loader.kill();
  }

  const spawnedAt = Date.now();
  const server = await startServer({ dataDir, startTimeoutMs: 300_000 });
  try {
    const listeningMs = Date.now() - spawnedAt;
    const ready = await waitFor(async () => (await request(server.port, 'GET', '/readyz', undefined, { timeoutMs: 5000 })).status === 200,
      { timeoutMs: 300_000, everyMs: 20 });
    const readyMs = Date.now() - spawnedAt;
    const cpuS = cpuSeconds(`/proc/${server.serverPid}/stat`);
    const mainThreadCpuS = cpuSeconds(`/proc/${server.serverPid}/task/${server.serverPid}/stat`);
    if (ready === null) return { pass: false, figure: `not ready ${readyMs} ms after the restart` };
    const counted = await request(server.port, 'COUNT', INDEX, undefined, { timeoutMs: 300_000 });
    const searched = await request(server.port, 'SEARCH', INDEX, { _query: { w: 't7' }, _limit: 1 }, { timeoutMs: 300_000 });
    const searchMs = Date.now() - spawnedAt;
    const wantHits = Math.floor(docs / WORDS) + (docs % WORDS > 7 ? 1 : 0);
    const countOk = counted.status === 200 && counted.json.total === docs;
    const searchOk = searched.status === 200 && searched.json.total === wantHits;
    // What the time went on: each shard copy logs its open (op-log entries replayed, ms).
    const opened = server.logs.filter((l) => l.msg === 'shard copy opened');
    const replayed = opened.reduce((sum, l) => sum + (l.replayedEntries ?? 0), 0);
    const slowestOpenMs = Math.max(0, ...opened.map((l) => l.ms ?? 0));
    log(`${opened.length} shard copies opened, ${replayed} op-log entries replayed, slowest open ${slowestOpenMs} ms`);
    for (const l of opened) {
      log(`  copy #${l.shard}: ${l.replayedEntries} entries replayed; ms: LevelDB log check ${l.logCheckMs}, store open ${l.storeOpenMs}, `
        + `segments ${l.segmentsMs} (${l.segments}), replay ${l.replayMs}, in all ${l.ms}`);
    }
    log(`listening ${listeningMs} ms, ready ${readyMs} ms, COUNT ${counted.status} ${counted.json?.total}, SEARCH ${searched.status} ${searched.json?.total} (want ${wantHits}) at ${searchMs} ms`);
    return {
      pass: (quick || readyMs <= READY_MS_MAX) && countOk && searchOk,
      figure: `ready ${(readyMs / 1000).toFixed(2)} s after the restart (listening ${(listeningMs / 1000).toFixed(2)} s), first search answered at ${(searchMs / 1000).toFixed(2)} s `
        + `with ${countOk && searchOk ? 'every' : 'NOT every'} document (COUNT ${counted.json?.total ?? counted.status} of ${docs}); ${docs} documents, `
        + `${replayed} op-log entries replayed (slowest shard open ${(slowestOpenMs / 1000).toFixed(2)} s); server CPU until ready ${cpuS.toFixed(2)} s, `
        + `main thread ${mainThreadCpuS.toFixed(2)} s`,
      details: { docs, listeningMs, readyMs, searchMs, count: counted.json?.total, hits: searched.json?.total, wantHits, replayed, slowestOpenMs, cpuS, mainThreadCpuS },
    };
  } finally {
    await server.stop(60_000);
  }
}
