// R15 — `tessera import` killed mid-file and run again.
//
// Method: a seeded NDJSON file of documents with `_id`s; `tessera import`
// (packages/cli/dist/main.js, small batches) loads it into a fresh index of
// a running server and is SIGKILLed once the index counts a seeded share
// (20–80 %) of the file; then the same command runs again to the end and
// must exit 0. The index must then count exactly the file's documents (no
// duplicate, none missing), and a seeded sample of them must read back as
// written. Quick: 1 round of 3,000 documents; full: 8 rounds of 50,000.
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { CLI, random, request, startServer, waitFor, within } from '../lib.mjs';

export const id = 'R15';
export const title = '`tessera import` killed mid-file and run again';
export const target = 'exact final count, no duplicate';

const SAMPLE = 200;

function documentOf(rand, i) {
  return { _id: `d${i}`, n: i, word: `w${Math.floor(rand() * 1000)}`, text: `document ${i} of the import ${Math.floor(rand() * 1e9)}` };
}

async function writeFile(path, docs, seed) {
  const rand = random(seed);
  const out = createWriteStream(path);
  for (let i = 0; i < docs; i++) {
    if (!out.write(`${JSON.stringify(documentOf(rand, i))}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

function startImport(port, file, index) {
  const child = spawn(process.execPath, [CLI, 'import', file, '--index', index, '--url', `http://127.0.0.1:${port}`, '--batch', '200', '--quiet'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => { output = (output + d).slice(-4096); });
  child.stderr.on('data', (d) => { output = (output + d).slice(-4096); });
  const exited = new Promise((res) => child.once('exit', (code, signal) => res({ code, signal, output: () => output })));
  return { child, exited };
}

async function count(port, index) {
  const r = await request(port, 'COUNT', index);
  return r.status === 200 ? r.json.total : r.status === 404 ? 0 : Promise.reject(new Error(`COUNT ${index}: ${r.status} ${r.text}`));
}

export async function run({ quick, seed, workDir, log }) {
  const rounds = quick ? 1 : 8;
  const docs = quick ? 3000 : 50_000;
  const file = join(workDir, 'docs.ndjson');
  await writeFile(file, docs, seed);
  const rand = random(seed + 1);
  const server = await startServer({ dataDir: join(workDir, 'data') });
  const failures = [];
  let killedMidFile = 0;
  let duplicates = 0;
  let missing = 0;
  try {
    for (let round = 0; round < rounds; round++) {
      const index = `/imported${round}/`;
      const share = 0.2 + 0.6 * rand();
      const first = startImport(server.port, file, index);
      const reached = await waitFor(async () => (await count(server.port, index)) >= share * docs, { timeoutMs: 300_000, everyMs: 10 });
      first.child.kill('SIGKILL');
      const firstExit = await first.exited;
      const atKill = await count(server.port, index);
      if (firstExit.signal === 'SIGKILL' && atKill < docs) killedMidFile++;
      else failures.push(`round ${round}: the first import was not killed mid-file (${firstExit.code ?? firstExit.signal}, ${atKill} of ${docs} in; reached ${reached})`);
      const second = startImport(server.port, file, index);
      const secondExit = await within(second.exited, 600_000);
      if (secondExit === null) {
        second.child.kill('SIGKILL');
        failures.push(`round ${round}: the rerun did not finish in 600 s`);
        continue;
      }
      if (secondExit.code !== 0) failures.push(`round ${round}: the rerun exited ${secondExit.code ?? secondExit.signal}: ${secondExit.output().trim()}`);
      const final = await count(server.port, index);
      duplicates += Math.max(0, final - docs);
      missing += Math.max(0, docs - final);
      if (final !== docs) failures.push(`round ${round}: ${final} documents counted, ${docs} in the file`);
      // A seeded sample reads back as written (the file is regenerated from the same seed).
      const docRand = random(seed);
      const expected = Array.from({ length: docs }, (_, i) => documentOf(docRand, i));
      let wrong = 0;
      for (let s = 0; s < SAMPLE; s++) {
        const want = expected[Math.floor(rand() * docs)];
        const got = await request(server.port, 'GET', `${index}${want._id}`);
        if (got.status !== 200 || got.json.n !== want.n || got.json.word !== want.word || got.json.text !== want.text) wrong++;
      }
      if (wrong > 0) failures.push(`round ${round}: ${wrong} of ${SAMPLE} sampled documents differ from the file`);
      log(`round ${round + 1}/${rounds}: import killed at ${atKill} of ${docs} (${(100 * share).toFixed(0)} % asked), rerun exit ${secondExit.code}, final count ${final}, ${wrong} sampled wrong`);
    }
  } finally {
    await server.stop();
  }
  for (const line of failures) log(line);
  return {
    pass: failures.length === 0 && killedMidFile === rounds,
    figure: `${duplicates} duplicates, ${missing} missing, ${failures.length} failures in ${rounds} round(s) of ${docs} documents (importer killed mid-file ${killedMidFile} time(s), then rerun to the end)`,
    details: { failures, killedMidFile, duplicates, missing },
  };
}
