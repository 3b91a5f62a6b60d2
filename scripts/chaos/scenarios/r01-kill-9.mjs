// R1 — kill -9 of the embedded server under mixed writes, restarted on the same directory.
//
// Method: each cycle starts `tessera serve` on the same data directory,
// waits for /readyz 200, checks every hot ID against the history, then runs one writer per hot ID
// (8 IDs: a writer's own writes are serial, so each ID's history is a line)
// with seeded PUT / UPDATE / UPDATE ?upsert / DELETE, a quarter with
// `?commit`, every write carrying a unique tag; after a seeded 150–500 ms
// it SIGKILLs the server. A write acknowledged is history; the one in
// flight at the kill may or may not have landed. After the restart each ID
// must be in the state of its last acknowledged write or of the write in
// flight — exactly: existence, `_version` and tag — and the index must
// agree with the store: a stored document is found by a search for its
// tag and counted once by its key, a missing one is not. Counted:
// lost (an acknowledged write missing), stale (an older version of the ID
// back), resurrected (a document back after an acknowledged DELETE),
// half-applied (store and search disagree), other (any other state).
// The history (history.jsonl: writes sent and answered, cycles, findings)
// stays in the work directory when the scenario fails.
// Quick: 5 cycles, on an index created first (one document with every
// field the writers send, ?commit, then a clean stop): the first write to
// a new index creates it and grows its schema, which on a loaded machine
// outlasts a 150–500 ms kill window, so 5 cycles could all kill the
// server inside that first write and acknowledge nothing. Full: 500
// cycles from an empty directory (its first cycle kills inside it).
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { keepAliveAgent, pick, random, request, sleep, startServer, waitFor } from '../lib.mjs';

export const id = 'R1';
export const title = 'kill -9 of the embedded server under mixed writes (PUT/UPDATE/upsert/DELETE, ¼ with `?commit`) on a few hot IDs, restart on the same directory';
export const target = '0 acknowledged writes lost, 0 stale versions, 0 half-applied, 0 resurrected deletes (500 cycles)';

const IDS = 8;
const INDEX = 'crash';
const OPS = ['PUT', 'PUT', 'UPDATE', 'UPSERT', 'DELETE'];

/** What a write leaves: absent (`version` 0; `deleted` when a DELETE did it), or a document with its version and tag. */
const absent = { exists: false, version: 0, tag: null };
const deleted = { ...absent, deleted: true };

export async function run({ quick, seed, workDir, log }) {
  const cycles = quick ? 5 : 500;
  const dataDir = join(workDir, 'data');
  const rand = random(seed);
  // Per ID: the state of the last acknowledged write, the expected state of the write in flight at the kill (or null), every tag it ever had.
  const ids = Array.from({ length: IDS }, (_, i) => ({ id: `hot${i}`, acked: absent, inflight: null, tags: new Set() }));
  const counts = { lost: 0, stale: 0, resurrected: 0, halfApplied: 0, other: 0 };
  const problems = [];
  // The history, kept in the work directory when the scenario fails: every write sent and answered, every check's finding.
  const history = createWriteStream(join(workDir, 'history.jsonl'));
  const record = (entry) => history.write(`${JSON.stringify(entry)}\n`);
  const problem = (line) => {
    record({ problem: line });
    if (problems.length < 20) problems.push(line);
  };
  let acknowledged = 0;
  let landedInFlight = 0;
  let tagSeq = 0;
  const startedAt = Date.now();

  const check = async (port, cycle) => {
    // As a load balancer would: traffic once /readyz says the shard copies are open (their logs replayed).
    const ready = await waitFor(async () => (await request(port, 'GET', '/readyz')).status === 200, { timeoutMs: 60_000 });
    if (ready === null) throw new Error(`cycle ${cycle}: /readyz not 200 within 60 s of the restart`);
    for (const h of ids) {
      const got = await request(port, 'GET', `/${INDEX}/${h.id}`);
      if (got.status !== 200 && got.status !== 404) throw new Error(`GET ${h.id}: ${got.status} ${got.text}`);
      const now = got.status === 200 ? { exists: true, version: got.json._version, tag: got.json.tag } : absent;
      const same = (s) => s.exists === now.exists && s.version === now.version && s.tag === now.tag;
      let verdict = null;
      if (same(h.acked)) {
        // the write in flight, if any, did not land
      } else if (h.inflight !== null && same(h.inflight)) {
        landedInFlight++;
        h.acked = h.inflight;
      } else if (!now.exists) verdict = 'lost';
      else if (h.acked.deleted === true) verdict = 'resurrected';
      else if (h.tags.has(now.tag) && now.tag !== h.acked.tag && now.tag !== h.inflight?.tag) verdict = 'stale';
      else verdict = 'other';
      const inflight = h.inflight;
      h.inflight = null;
      // Store and index must agree, whatever the verdict above.
      const byKey = await request(port, 'COUNT', `/${INDEX}/`, { _query: { key: h.id } });
      const byTag = now.exists ? await request(port, 'SEARCH', `/${INDEX}/`, { _query: { tag: now.tag } }) : null;
      const keyTotal = byKey.status === 200 ? byKey.json.total : byKey.status === 404 ? 0 : NaN;
      const tagFound = byTag === null || (byTag.status === 200 && byTag.json.total === 1 && byTag.json.hits[0]?._id === h.id);
      if (keyTotal !== (now.exists ? 1 : 0) || !tagFound) {
        counts.halfApplied++;
        problem(`cycle ${cycle} ${h.id}: stored ${JSON.stringify(now)}, counted by key ${keyTotal}, found by tag ${tagFound}`);
      }
      if (verdict !== null) {
        counts[verdict]++;
        problem(`cycle ${cycle} ${h.id}: ${verdict}: stored ${JSON.stringify(now)}, acknowledged ${JSON.stringify(h.acked)}, in flight ${JSON.stringify(inflight)}`);
        h.acked = now; // go on from what is there, so one fault is counted once
      }
    }
  };

  const writer = async (port, h, wrand, running) => {
    const agent = keepAliveAgent();
    try {
      while (running.value) {
        let op = pick(wrand, OPS);
        if (!h.acked.exists && (op === 'UPDATE' || op === 'DELETE')) op = 'PUT';
        const commit = wrand() < 0.25;
        const tag = `u${seed}x${++tagSeq}t`;
        h.tags.add(tag);
        let method = op;
        let query = [];
        if (op === 'UPSERT') { method = 'UPDATE'; query.push('upsert'); }
        if (commit) query.push('commit');
        const path = `/${INDEX}/${h.id}${query.length > 0 ? `?${query.join('&')}` : ''}`;
        const body = op === 'DELETE' ? undefined
          : op === 'UPDATE' ? { tag, step: tagSeq } : { key: h.id, tag, step: tagSeq, pad: 'p'.repeat(tagSeq % 300) };
        h.inflight = op === 'DELETE' ? deleted
          : { exists: true, version: h.acked.exists ? h.acked.version + 1 : 1, tag };
        record({ sent: method, path, tag, expect: h.inflight });
        let answer;
        try {
          answer = await request(port, method, path, body, { agent, timeoutMs: 10_000 });
        } catch (err) {
          record({ unanswered: tag, err: String(err?.message ?? err) });
          return; // the kill: this write stays in flight
        }
        record({ answered: tag, status: answer.status, version: answer.json?._version });
        if (answer.status !== 200 && answer.status !== 204) {
          // Not acknowledged (the write stays in flight); this writer stops for the cycle.
          counts.other++;
          problem(`${method} ${path}: ${answer.status} ${answer.text}`);
          return;
        }
        if (op !== 'DELETE' && answer.json._version !== h.inflight.version) {
          // The server started from another state than the history says (a fault counted at the check): go on from its.
          counts.other++;
          problem(`${method} ${path}: acknowledged _version ${answer.json._version}, expected ${h.inflight.version}`);
          h.inflight = { ...h.inflight, version: answer.json._version };
        }
        h.acked = h.inflight;
        h.inflight = null;
        acknowledged++;
      }
    } finally {
      agent.destroy();
    }
  };

  try {
    if (quick) {
      const server = await startServer({ dataDir });
      try {
        const made = await request(server.port, 'PUT', `/${INDEX}/schema?commit`, { key: 'schema', tag: 'schema', step: 0, pad: 'p' });
        if (made.status !== 200) throw new Error(`creating /${INDEX}/: ${made.status} ${made.text}`);
      } finally {
        await server.stop();
      }
    }
    for (let cycle = 0; cycle < cycles; cycle++) {
      const server = await startServer({ dataDir });
      record({ cycle, port: server.port });
      try {
        await check(server.port, cycle);
        const running = { value: true };
        const writers = ids.map((h, i) => writer(server.port, h, random(seed * 1000 + cycle * IDS + i), running));
        const failed = Promise.all(writers).then(() => null, (err) => err);
        await Promise.race([sleep(150 + Math.floor(rand() * 350)), failed]);
        await server.kill();
        running.value = false;
        const err = await failed;
        if (err !== null) throw err;
      } finally {
        await server.kill();
      }
      if ((cycle + 1) % Math.max(1, Math.floor(cycles / 10)) === 0 || cycle === cycles - 1) {
        log(`cycle ${cycle + 1}/${cycles}: ${acknowledged} acknowledged, ${landedInFlight} in-flight writes landed, ${JSON.stringify(counts)}, ${((Date.now() - startedAt) / 1000).toFixed(0)} s`);
      }
    }
    const last = await startServer({ dataDir });
    try {
      await check(last.port, cycles);
    } finally {
      await last.stop();
    }
  } finally {
    record({ counts, acknowledged, landedInFlight });
    history.end();
  }
  for (const line of problems) log(line);
  const bad = counts.lost + counts.stale + counts.resurrected + counts.halfApplied + counts.other;
  return {
    pass: bad === 0 && acknowledged > 0,
    figure: `${counts.lost} lost, ${counts.stale} stale, ${counts.halfApplied} half-applied, ${counts.resurrected} resurrected, ${counts.other} other `
      + `in ${cycles} cycles (${acknowledged} writes acknowledged on ${IDS} IDs, ${landedInFlight} in flight at a kill landed)`,
    details: { counts, acknowledged, landedInFlight, problems },
  };
}
