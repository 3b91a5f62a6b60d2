// R12 — a flipped byte in every kind of file a shard copy keeps.
//
// Method: a `tessera serve` (one index, 1 shard, 0 replicas, a write buffer
// of 50 changes so segments are flushed often) is given N documents, each
// with a unique term, and M stored-content blobs of seeded random bytes; the
// last write has ?commit. It is stopped (SIGTERM) and its data directory kept
// as the pristine copy. Then, per kind of file, T trials: a fresh copy of the
// pristine directory has one bit flipped (seeded: file, offset, bit) in one
// file of that kind, a server is started on it and everything is read back:
// every document (GET), every blob (GET, Accept: its type, byte-compared),
// every unique term (search: exactly its document) and the total of a term
// every document holds. Kinds: LevelDB tables (`*.ldb`, which also hold the
// segments, stored as chunks under their own keys), LevelDB write-ahead
// logs (`*.log`), LevelDB manifests (`MANIFEST-*`) and content volumes
// (`content/*.volume`). A trial is
//   detected  when the server refused to start, or some read answered an
//             error (5xx with a code), and no read served different data;
//   wrong     when a read answered 2xx with data other than what was written
//             (a document, a blob, a search hit or total) — served as valid;
//   crashed   when the server died while the data was read back;
//   unnoticed when every read answered the written data and nothing was
//             reported (the flip hit bytes no read looks at).
// Passes when every trial of every kind is detected (figure: detected/planted
// per kind, with the wrong and unnoticed counts).
//
// quick: 100 documents, 5 blobs, 1 trial per kind; full: 400, 20, 15.
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { random } from '../../bench/bench-lib.mjs';
import { keepAliveAgent, request, SLOW_LOG_OFF, startServer } from '../lib.mjs';

export const id = 'R12';
export const title = 'a flipped byte in every kind of file: LevelDB tables (and the segments in them), logs, manifests, content volumes';
export const target = '100 % detected, never served as data; the shard says what is corrupt';

const SERVER_ARGS = ['--shards', '1', '--replicas', '0', '--write-buffer-ops', '50', '--store-write-buffer-bytes', String(64 * 1024)];
const BLOB_TYPE = 'application/octet-stream';

const KINDS = [
  { kind: 'ldb', match: (path) => path.endsWith('.ldb') },
  { kind: 'log', match: (path) => /\/\d+\.log$/.test(path) },
  { kind: 'manifest', match: (path) => /\/MANIFEST-\d+$/.test(path) },
  { kind: 'volume', match: (path) => /\/content\/[^/]+\.volume$/.test(path) },
];

function filesUnder(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

/** The shard copy's files (not the node's lock database). */
function shardFiles(dataDir) {
  return filesUnder(dataDir).filter((path) => path.includes('/r12/') && statSync(path).size > 0).sort();
}

/** Write the documents and blobs; returns what was written. */
async function writeData(port, next, docs, blobs) {
  const agent = keepAliveAgent(4);
  const written = { docs: new Map(), blobs: new Map() };
  try {
    const ok = (r, what) => { if (r.status !== 200) throw new Error(`${what}: ${r.status} ${r.text.slice(0, 200)}`); };
    ok(await request(port, 'PUT', '/r12/', undefined, { agent }), 'create index');
    for (let i = 0; i < docs; i++) {
      const body = { n: i, text: `uniq${i}x common ${Array.from({ length: 8 }, () => `w${Math.floor(next() * 500)}`).join(' ')}`, ratio: Math.round(next() * 1e6) / 1e3 };
      ok(await request(port, 'PUT', `/r12/d${i}`, body, { agent }), `PUT d${i}`);
      written.docs.set(`d${i}`, body);
      if (i % Math.max(1, Math.floor(docs / blobs)) === 0 && written.blobs.size < blobs) {
        const bytes = Buffer.from(Array.from({ length: 1000 + Math.floor(next() * 4000) }, () => Math.floor(next() * 256)));
        const blobId = `b${written.blobs.size}`;
        ok(await request(port, 'PUT', `/r12/${blobId}`, bytes, { agent, headers: { 'content-type': BLOB_TYPE } }), `PUT ${blobId}`);
        written.blobs.set(blobId, bytes);
      }
    }
    ok(await request(port, 'PUT', '/r12/last?commit=true', { n: -1, text: 'last common' }, { agent }), 'PUT last');
    written.docs.set('last', { n: -1, text: 'last common' });
    return written;
  } finally {
    agent.destroy();
  }
}

/** Read everything back; returns { errors: [...], wrong: [...] }. */
async function readBack(port, written) {
  const agent = keepAliveAgent(4);
  const errors = [];
  const wrong = [];
  const see = async (what, request, check) => {
    let r;
    try {
      r = await request();
    } catch (err) {
      errors.push(`${what}: ${err.message}`);
      return;
    }
    if (r.status >= 500 || r.status === 404 || r.status === 400) {
      // A document that vanished and a 400 on a read we know is valid are wrong data too, unless the error names a cause.
      if (r.status >= 500) errors.push(`${what}: ${r.status} ${r.json?.code ?? ''}`);
      else wrong.push(`${what}: ${r.status} ${r.json?.code ?? ''}`);
      return;
    }
    const why = check(r);
    if (why) wrong.push(`${what}: ${why}`);
  };
  try {
    for (const [docId, body] of written.docs) {
      await see(`GET ${docId}`, () => request(port, 'GET', `/r12/${docId}`, undefined, { agent, headers: { accept: 'application/json' } }), (r) => {
        const got = r.json ?? {};
        return Object.keys(body).every((k) => JSON.stringify(got[k]) === JSON.stringify(body[k])) ? null : `served ${r.text.slice(0, 120)}`;
      });
    }
    // JSON accepted too (q=0.1): an error must be renderable, or API.md §2.3 turns it into an empty 406
    // (a corrupted blob asked for with `Accept: application/octet-stream` alone answers 406, not 500).
    for (const [blobId, bytes] of written.blobs) {
      await see(`GET ${blobId}`, () => request(port, 'GET', `/r12/${blobId}`, undefined, { agent, headers: { accept: `${BLOB_TYPE}, application/json;q=0.1` } }),
        (r) => (r.bytes.equals(bytes) ? null : `blob of ${r.bytes.length} bytes differs from the ${bytes.length} written`));
    }
    for (const [docId, body] of written.docs) {
      if (docId === 'last') continue;
      await see(`search uniq${body.n}x`, () => request(port, 'GET', `/r12/:search?q=uniq${body.n}x&limit=3`, undefined, { agent }), (r) => {
        const ids = (r.json?.hits ?? []).map((h) => h._id);
        return r.json?.total === 1 && ids.length === 1 && ids[0] === docId ? null : `found ${JSON.stringify(ids)} (total ${r.json?.total})`;
      });
    }
    await see('count common', () => request(port, 'GET', '/r12/:count?q=common', undefined, { agent }),
      (r) => (r.json?.total === written.docs.size ? null : `total ${r.json?.total}, expected ${written.docs.size}`));
  } finally {
    agent.destroy();
  }
  return { errors, wrong };
}

export async function run({ quick, seed, workDir, log }) {
  const next = random(seed);
  const docs = quick ? 100 : 400;
  const blobs = quick ? 5 : 20;
  const trials = quick ? 1 : 15;
  const pristine = join(workDir, 'pristine');
  mkdirSync(pristine, { recursive: true });

  const first = await startServer({ dataDir: pristine, args: [...SLOW_LOG_OFF, ...SERVER_ARGS] });
  let written;
  try {
    written = await writeData(first.port, next, docs, blobs);
  } finally {
    await first.stop();
  }
  const files = shardFiles(pristine);
  log(`R12 wrote ${written.docs.size} documents and ${written.blobs.size} blobs; shard files: ${files.map((f) => `${relative(pristine, f)} (${statSync(f).size} B)`).join(', ')}`);
  // An unmodified copy must read back intact: else the scenario measures itself. (A copy: opening
  // the pristine directory would replay its log into a table and leave no log to flip bytes in.)
  {
    const control = join(workDir, 'control');
    cpSync(pristine, control, { recursive: true });
    const server = await startServer({ dataDir: control, args: [...SLOW_LOG_OFF, ...SERVER_ARGS] });
    try {
      const intact = await readBack(server.port, written);
      if (intact.errors.length + intact.wrong.length > 0) {
        return { pass: false, figure: `the unmodified data did not read back: ${[...intact.errors, ...intact.wrong].slice(0, 3).join('; ')}`, details: intact };
      }
    } finally {
      await server.stop();
    }
  }

  const results = {};
  const examples = [];
  for (const { kind, match } of KINDS) {
    const candidates = files.filter(match);
    const r = (results[kind] = { planted: 0, detected: 0, wrong: 0, crashed: 0, unnoticed: 0 });
    if (candidates.length === 0) { log(`R12 ${kind}: no file of this kind`); continue; }
    for (let t = 0; t < trials; t++) {
      const trialDir = join(workDir, `trial-${kind}-${t}`);
      rmSync(trialDir, { recursive: true, force: true });
      cpSync(pristine, trialDir, { recursive: true });
      const file = candidates[Math.floor(next() * candidates.length)];
      const target = join(trialDir, relative(pristine, file));
      const bytes = readFileSync(target);
      const offset = Math.floor(next() * bytes.length);
      const bit = 1 << Math.floor(next() * 8);
      bytes[offset] ^= bit;
      writeFileSync(target, bytes);
      r.planted++;
      const where = `${relative(pristine, file)} byte ${offset} bit ${Math.log2(bit)}`;
      let outcome;
      let evidence;
      let server;
      try {
        server = await startServer({ dataDir: trialDir, args: [...SLOW_LOG_OFF, ...SERVER_ARGS] });
      } catch (err) {
        outcome = 'detected';
        evidence = `server refused to start: ${String(err.message).split('\n').find((l) => /corrupt|checksum|error/i.test(l))?.slice(0, 200) ?? String(err.message).slice(0, 200)}`;
      }
      if (server !== undefined) {
        try {
          const seen = await readBack(server.port, written);
          const reported = server.logs.filter((l) => l.level >= 50 || /corrupt/i.test(JSON.stringify(l))).map((l) => String(l.msg ?? '') + (l.err?.message ? `: ${l.err.message}` : ''));
          if (seen.wrong.length > 0) { outcome = 'wrong'; evidence = seen.wrong.slice(0, 3).join('; '); }
          else if (!server.alive()) { outcome = 'crashed'; evidence = `the server died: ${server.stderr().split('\n').filter(Boolean).slice(-3).join(' | ').slice(0, 300)}`; }
          else if (seen.errors.length > 0 || reported.length > 0) { outcome = 'detected'; evidence = [...seen.errors, ...reported].slice(0, 3).join('; '); }
          else { outcome = 'unnoticed'; evidence = 'every read answered the written data'; }
        } finally {
          await server.stop();
        }
      }
      r[outcome]++;
      examples.push({ kind, where, outcome, evidence });
      log(`R12 ${kind} trial ${t + 1}/${trials}: ${where}: ${outcome} (${evidence.slice(0, 240)})`);
      if (outcome === 'detected') rmSync(trialDir, { recursive: true, force: true });
    }
  }
  const kinds = Object.entries(results);
  const pass = kinds.every(([, r]) => r.planted > 0 && r.detected === r.planted);
  return {
    pass,
    figure: kinds.map(([kind, r]) => `${kind} ${r.detected}/${r.planted} detected${r.wrong ? `, ${r.wrong} served wrong` : ''}${r.crashed ? `, ${r.crashed} crashed the server` : ''}${r.unnoticed ? `, ${r.unnoticed} unnoticed` : ''}`).join('; '),
    details: { results, examples },
  };
}
