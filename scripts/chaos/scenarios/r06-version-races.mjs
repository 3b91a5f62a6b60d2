// R6 — 8 clients racing on 10 keys with optimistic concurrency (`?version`, `_version`).
//
// Method: one server; 8 clients, each on its own keep-alive connection, loop
// over seeded keys: GET the document (404: it does not exist yet, expected
// version 0), then write `counter + 1` conditioned on the version read —
// by turns PUT ?version=N, PUT with body `_version: N`, UPDATE ?version=N
// (a merge) and UPDATE with body `_version: N` (a creation is a PUT with
// version 0) — and on 409 start again.
// Every acknowledged write is one increment, so at the end every key's
// counter must equal its acknowledged writes, its `_version` too (creation is
// 1, each write + 1), and no two acknowledgements of a key may carry the same
// version (two writers both told they won = a lost update).
// Quick: 100 attempts per client; full: 5,000 per client.
import { join } from 'node:path';
import { keepAliveAgent, random, request, startServer } from '../lib.mjs';

export const id = 'R6';
export const title = '8 clients racing on 10 keys with `?version` / `_version`';
export const target = '0 lost updates; final counter = successes';

const CLIENTS = 8;
const KEYS = 10;
const INDEX = 'races';

/** The four conditional writes, by turns: [method, query, whether the version goes in the body]. */
const WRITES = [['PUT', true, false], ['PUT', false, true], ['UPDATE', true, false], ['UPDATE', false, true]];

export async function run({ quick, seed, workDir, log }) {
  const attempts = quick ? 100 : 5000;
  const server = await startServer({ dataDir: join(workDir, 'data') });
  const successes = new Map(); // key → acknowledged writes
  const ackedVersions = new Map(); // key → Set of versions acknowledged
  let duplicateAcks = 0;
  let conflicts = 0;
  const unexpected = [];
  try {
    await Promise.all(Array.from({ length: CLIENTS }, async (_, client) => {
      const rand = random(seed * 31 + client);
      const agent = keepAliveAgent();
      try {
        for (let i = 0; i < attempts && unexpected.length < 10; i++) {
          const key = `k${Math.floor(rand() * KEYS)}`;
          const read = await request(server.port, 'GET', `/${INDEX}/${key}`, undefined, { agent });
          if (read.status !== 200 && read.status !== 404) { unexpected.push(`GET ${key}: ${read.status} ${read.text}`); continue; }
          const version = read.status === 200 ? read.json._version : 0;
          const counter = read.status === 200 ? read.json.counter : 0;
          const [chosen, inQuery, inBody] = WRITES[(client + i) % WRITES.length];
          // UPDATE of a missing document is 404: a creation (expected version 0) is a PUT.
          const method = version === 0 ? 'PUT' : chosen;
          const body = { counter: counter + 1, client, ...(inBody ? { _version: version } : {}) };
          const path = `/${INDEX}/${key}${inQuery ? `?version=${version}` : ''}`;
          const write = await request(server.port, method, path, body, { agent });
          if (write.status === 409) { conflicts++; continue; }
          if (write.status !== 200 && write.status !== 201) { unexpected.push(`${method} ${path}: ${write.status} ${write.text}`); continue; }
          successes.set(key, (successes.get(key) ?? 0) + 1);
          const seen = ackedVersions.get(key) ?? new Set();
          if (seen.has(write.json._version)) duplicateAcks++;
          seen.add(write.json._version);
          ackedVersions.set(key, seen);
        }
      } finally {
        agent.destroy();
      }
    }));
    let lost = 0;
    let versionMismatch = 0;
    let acked = 0;
    for (let k = 0; k < KEYS; k++) {
      const key = `k${k}`;
      const expected = successes.get(key) ?? 0;
      acked += expected;
      const final = await request(server.port, 'GET', `/${INDEX}/${key}`);
      const counter = final.status === 200 ? final.json.counter : 0;
      const version = final.status === 200 ? final.json._version : 0;
      lost += Math.max(0, expected - counter);
      if (counter !== expected || version !== expected) {
        versionMismatch++;
        log(`${key}: ${expected} acknowledged writes, final counter ${counter}, _version ${version}`);
      }
    }
    log(`${acked} acknowledged writes, ${conflicts} conflicts (409), ${unexpected.length} unexpected answers`);
    for (const line of unexpected) log(`unexpected: ${line}`);
    const pass = acked > 0 && lost === 0 && duplicateAcks === 0 && versionMismatch === 0 && unexpected.length === 0;
    return {
      pass,
      figure: `${lost} lost updates, ${duplicateAcks} versions acknowledged twice, ${versionMismatch} of ${KEYS} keys whose final counter or _version ≠ successes; `
        + `${acked} successes, ${conflicts} conflicts in ${CLIENTS * attempts} attempts`,
      details: { acked, conflicts, lost, duplicateAcks, versionMismatch, unexpected },
    };
  } finally {
    await server.stop();
  }
}
