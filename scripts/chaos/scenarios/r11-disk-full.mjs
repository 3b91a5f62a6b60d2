// R11 — disk full: the data directory on a 64 MB tmpfs, written until full.
//
// Method: a 64 MB tmpfs is mounted in workDir (`mount -t tmpfs`, as root;
// where mounting is refused the scenario reports SKIPPED with the reason,
// never a pass of its own), a filler file takes most of it, and a
// `tessera serve` (1 shard, 0 replicas) on it is written to by one client:
// JSON documents of ~8 KB and, every 8th write, a 32 KB stored-content blob,
// each acknowledged one remembered with its bytes. Once 30 writes in a row
// were refused, the disk is full. Then:
//  - every refused write must have answered 507 with the API.md §4 body and
//    code `storage_full` (a 503, a 500 or a reset counts against it);
//  - every acknowledged document and blob must still read back (reads served);
//  - the filler is deleted and writes must succeed again within 10 s, and
//    then 50 in a row, without a restart;
//  - the server is stopped and started again on the same directory and every
//    acknowledged write must read back exactly (nothing acknowledged lost).
// On failure the data directory is copied out of the tmpfs into workDir
// before it is unmounted.
//
// quick: 58 MB filler (about 6 MB for the server); full: 24 MB filler (40 MB).
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { random } from '../../bench/bench-lib.mjs';
import { keepAliveAgent, request, sleep, SLOW_LOG_OFF, startServer } from '../lib.mjs';

export const id = 'R11';
export const title = 'disk full: the data directory on a 64 MB tmpfs, written until full';
export const target = '507 with a clear error, reads still served, writes resume after space is freed, nothing acknowledged lost';

const MB = 1024 * 1024;
// No document cache: reads while full must come from LevelDB, not from memory.
const SERVER_ARGS = ['--shards', '1', '--replicas', '0', '--store-write-buffer-bytes', String(MB), '--document-cache-bytes-max', '0'];
const REFUSED_IN_A_ROW = 30;
const BLOB_TYPE = 'application/octet-stream';

/** Mount a 64 MB tmpfs on `dir`; returns null, or why it could not. */
function mountTmpfs(dir) {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
    return null;
  } catch (err) {
    return String(err.stderr ?? err.message).trim().split('\n')[0] || String(err.message);
  }
}

/** One write: a JSON document or a blob; resolves with { status, json } (status 0 on a network error). */
async function write(port, agent, item) {
  try {
    const r = item.blob
      ? await request(port, 'PUT', `/r11/${item.id}`, item.blob, { agent, headers: { 'content-type': BLOB_TYPE } })
      : await request(port, 'PUT', `/r11/${item.id}`, item.body, { agent });
    return { status: r.status, json: r.json, text: r.text };
  } catch (err) {
    return { status: 0, text: String(err.message) };
  }
}

/** Read every acknowledged item back; returns the ids that did not read back exactly, with why. */
async function readAll(port, acked) {
  const agent = keepAliveAgent(4);
  const bad = [];
  try {
    for (const item of acked) {
      try {
        const r = await request(port, 'GET', `/r11/${item.id}`, undefined, { agent, headers: { accept: item.blob ? `${BLOB_TYPE}, application/json;q=0.1` : 'application/json' } });
        if (r.status !== 200) bad.push(`${item.id}: ${r.status} ${r.json?.code ?? ''}`);
        else if (item.blob ? !r.bytes.equals(item.blob) : r.json?.n !== item.body.n || r.json?.pad !== item.body.pad) bad.push(`${item.id}: different data`);
      } catch (err) {
        bad.push(`${item.id}: ${err.message}`);
      }
    }
  } finally {
    agent.destroy();
  }
  return bad;
}

export async function run({ quick, seed, workDir, log }) {
  const next = random(seed);
  const mnt = join(workDir, 'tmpfs');
  mkdirSync(mnt, { recursive: true });
  const refused = mountTmpfs(mnt);
  if (refused !== null) {
    log(`R11 SKIPPED: cannot mount a tmpfs (${refused})`);
    return { pass: true, skipped: true, figure: `SKIPPED: cannot mount a 64 MB tmpfs (${refused}); run as root`, details: { refused } };
  }
  const dataDir = join(mnt, 'data');
  const filler = join(mnt, 'filler');
  let server;
  let pass = false;
  try {
    mkdirSync(dataDir);
    writeFileSync(filler, Buffer.alloc((quick ? 58 : 24) * MB, 0x5a));
    server = await startServer({ dataDir, args: [...SLOW_LOG_OFF, ...SERVER_ARGS] });
    const agent = keepAliveAgent(1);
    const acked = [];
    const refusals = {};
    const wrongRefusals = [];
    let unclear = 0;
    let inARow = 0;
    let n = 0;
    const makeItem = () => {
      const id = `w${n}`;
      const item = n % 8 === 7
        ? { id, blob: Buffer.from(Array.from({ length: 32 * 1024 }, () => Math.floor(next() * 256))) }
        : { id, body: { n, pad: Array.from({ length: 800 }, () => Math.floor(next() * 1e9).toString(36)).join(' ') } };
      n++;
      return item;
    };
    const deadline = Date.now() + (quick ? 60_000 : 300_000);
    while (inARow < REFUSED_IN_A_ROW && Date.now() < deadline) {
      const item = makeItem();
      const r = await write(server.port, agent, item);
      if (r.status === 200) { acked.push(item); inARow = 0; continue; }
      inARow++;
      const key = `${r.status} ${r.json?.code ?? ''}`.trim();
      refusals[key] = (refusals[key] ?? 0) + 1;
      const clear = r.status === 507 && r.json?.code === 'storage_full' && r.json?.status === 507 && /space|storage/i.test(r.json?.message ?? '');
      if (!clear) unclear++;
      if (!clear && wrongRefusals.length < 10) wrongRefusals.push(`${item.id}: ${r.status} ${r.text.slice(0, 200)}`);
    }
    const free = statfsSync(mnt);
    const full = inARow >= REFUSED_IN_A_ROW;
    log(`R11 filled: ${acked.length} writes acknowledged, refusals ${JSON.stringify(refusals)}, ${free.bavail * free.bsize} bytes free`);

    const unreadWhileFull = await readAll(server.port, acked);
    log(`R11 reads while full: ${acked.length - unreadWhileFull.length}/${acked.length} read back`);

    rmSync(filler);
    let resumedAfterMs = -1;
    const freedAt = Date.now();
    while (Date.now() - freedAt < 10_000) {
      const item = makeItem();
      const r = await write(server.port, agent, item);
      if (r.status === 200) { acked.push(item); resumedAfterMs = Date.now() - freedAt; break; }
      await sleep(200);
    }
    let afterFree = 0;
    const afterFreeFailures = [];
    if (resumedAfterMs >= 0) {
      for (let i = 0; i < 50; i++) {
        const item = makeItem();
        const r = await write(server.port, agent, item);
        if (r.status === 200) { acked.push(item); afterFree++; } else afterFreeFailures.push(`${item.id}: ${r.status} ${r.json?.code ?? r.text.slice(0, 100)}`);
      }
    }
    log(`R11 space freed: writes resumed after ${resumedAfterMs} ms, then ${afterFree}/50 acknowledged`);
    agent.destroy();
    const stopped = await server.stop();
    server = await startServer({ dataDir, args: [...SLOW_LOG_OFF, ...SERVER_ARGS] });
    const lost = await readAll(server.port, acked);
    log(`R11 after a restart: ${acked.length - lost.length}/${acked.length} acknowledged writes read back (exit ${stopped.code ?? stopped.signal})`);

    pass = full && unclear === 0 && unreadWhileFull.length === 0 && resumedAfterMs >= 0 && afterFree === 50 && lost.length === 0;
    const refusedTotal = Object.values(refusals).reduce((a, b) => a + b, 0);
    return {
      pass,
      figure: `${full ? '' : 'disk never filled; '}${refusedTotal - unclear}/${refusedTotal} refusals 507 storage_full (${JSON.stringify(refusals)}); `
        + `${unreadWhileFull.length} acknowledged unreadable while full; `
        + `writes resumed ${resumedAfterMs >= 0 ? `${resumedAfterMs} ms after freeing space, ${afterFree}/50 then` : 'never (10 s)'}; `
        + `${lost.length}/${acked.length} acknowledged lost after a restart`,
      details: { refusals, wrongRefusals, unreadWhileFull: unreadWhileFull.slice(0, 10), afterFreeFailures: afterFreeFailures.slice(0, 10), lost: lost.slice(0, 10) },
    };
  } finally {
    if (server !== undefined) await server.stop();
    if (!pass) {
      try { cpSync(dataDir, join(workDir, 'data'), { recursive: true }); } catch { /* nothing to keep */ }
    }
    try { execFileSync('umount', [mnt]); } catch { execFileSync('umount', ['-l', mnt]); }
  }
}
