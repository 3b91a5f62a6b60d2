#!/usr/bin/env node
// Benchmark (prints, never asserts): stored content (API.md §6) throughput.
// Writes COUNT blobs of SIZE bytes to a fresh `tessera serve` over one
// keep-alive HTTP connection (a minimal client, see `send`) (PUT /bench/<i>, Content-Type
// application/octet-stream), reads them back (GET), and does the same with
// plain `fs` (writeFile, and open/read into a reused buffer/close, of one file
// per blob, same bytes; the client reads into a reused buffer likewise) in the same
// run, so the ratio is measured on the same machine at the same time. Then the
// same with ?commit against writeFile + fsync.
// --concurrency N: N connections at once, and N fs operations at once.
// SERVER_MALLOC=default: Tessera's server runs without the malloc settings of
// `npm start` (SERVER_ENV, docs/operations.md "Node flags"), to measure what
// they cost: each request body of 1 MiB is then a fresh mmap, faulted in
// page by page and unmapped when freed.
//   npx tsc -b && node scripts/bench/content.mjs [--count 200] [--size 1048576] [--rounds 3] [--concurrency 1] [--profile DIR]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { open, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SERVER_ENV, SERVER_NODE_FLAGS } from '../../packages/cli/dist/node-flags.js';

const { values } = parseArgs({ options: {
  count: { type: 'string', default: '200' }, size: { type: 'string', default: String(1 << 20) }, rounds: { type: 'string', default: '3' },
  concurrency: { type: 'string', default: '1' },
  // A directory: Tessera's server writes a V8 CPU profile there at its exit.
  profile: { type: 'string' },
} });
const CONCURRENCY = Number(values.concurrency);
const COUNT = Number(values.count);
const SIZE = Number(values.size);
const ROUNDS = Number(values.rounds);

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const cli = join(root, 'packages/cli/dist/main.js');
const data = mkdtempSync(join(tmpdir(), 'tessera-bench-content-'));
const plain = mkdtempSync(join(tmpdir(), 'tessera-bench-fs-'));

const blobs = Array.from({ length: COUNT }, (_, n) => {
  const b = Buffer.allocUnsafe(SIZE);
  for (let i = 0; i < SIZE; i += 4) b.writeUInt32LE(((i + n) * 2654435761) >>> 0, i);
  return b;
});

const profile = values.profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', resolve(values.profile)];
const child = spawn(process.execPath, [...profile, ...SERVER_NODE_FLAGS, cli, 'serve', '--port', '0', '--data', data, '--shards', '1'], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...(process.env.SERVER_MALLOC === 'default' ? {} : SERVER_ENV) } });
const port = await new Promise((res, rej) => {
  let buffered = '';
  child.stdout.on('data', (d) => {
    buffered += d;
    const line = buffered.split('\n').find((l) => l.includes('"msg":"listening"'));
    if (line) res(JSON.parse(line).port);
  });
  child.once('exit', (code) => rej(new Error(`server exited with ${code}`)));
});
/**
 * A reusable destination of `size` bytes, 2 KiB past a page boundary. A read
 * whose destination sits at the same offset within a 4 KiB page as its source
 * (the page cache, or a socket's pages) runs at half speed on this machine's
 * CPUs (4K aliasing: 1.1 vs 2.3–2.6 GB/s for plain fs reads), and a fresh
 * large allocation starts on a page boundary. The fs side and the client
 * both read into one of these, so neither is slowed by where its buffer fell.
 */
function destination(size) {
  return Buffer.allocUnsafeSlow(size + 4096).subarray(2048, 2048 + size);
}

/**
 * A minimal keep-alive HTTP/1.1 client on one socket (like wrk): the request
 * in one write, the answer's head parsed, its Content-Length body read by the
 * socket straight into one receive buffer, reused (`onread` with a buffer
 * function: the kernel copies into the destination, as `fs` read does on the
 * fs side). Node's http client costs more per MiB than the server under test,
 * which would measure the client.
 */
async function connection(port) {
  const scratch = Buffer.allocUnsafe(1 << 16);
  let pending = null;
  let buffered = Buffer.alloc(0);
  let received = Buffer.alloc(0);
  const onBytes = (n, into) => {
    if (pending === null) throw new Error('unexpected bytes');
    if (pending.body !== undefined) pending.got += n; // read in place
    else {
      const chunk = into.subarray(0, n);
      buffered = buffered.length === 0 ? Buffer.from(chunk) : Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffered.subarray(0, end).toString('latin1');
      pending.status = Number(head.slice(9, 12));
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (received.length < length) received = destination(length);
      pending.body = received.subarray(0, length);
      pending.got = buffered.copy(pending.body, 0, end + 4);
      buffered = Buffer.alloc(0);
    }
    if (pending.got >= pending.body.length) {
      const done = pending;
      pending = null;
      if (done.status >= 300) done.reject(new Error(`${done.what}: ${done.status}`));
      else done.resolve(done.body);
    }
  };
  // Where the socket reads next: the rest of the body being received, else the scratch buffer for a head.
  const nextBuffer = () => (pending?.body !== undefined && pending.got < pending.body.length ? pending.body.subarray(pending.got) : scratch);
  const socket = connect({ port, host: '127.0.0.1', onread: { buffer: nextBuffer, callback: onBytes } });
  socket.setNoDelay(true);
  await new Promise((res) => socket.once('connect', res));
  return {
    send(method, path, body) {
      return new Promise((resolve, reject) => {
        pending = { resolve, reject, what: `${method} ${path}` };
        const head = `${method} ${path} HTTP/1.1\r\nHost: bench\r\n${body === undefined ? '' : `Content-Type: application/octet-stream\r\nContent-Length: ${body.length}\r\n`}\r\n`;
        socket.cork();
        socket.write(head, 'latin1');
        if (body !== undefined) socket.write(body);
        socket.uncork();
      });
    },
    close: () => socket.destroy(),
  };
}
const connections = await Promise.all(Array.from({ length: CONCURRENCY }, () => connection(port)));

/**
 * The floor over this client on this machine: a bare node:net server in its
 * own process that answers `GET /<name>` with the plain-fs file of that name
 * (open, read, close per request, as the fs side does) and a Content-Length
 * head, nothing else; and `PUT /<name>` by writing the body it received into
 * that file (open, write, close; `?commit`: fdatasync before close, as the fs
 * side does) and answering 201 with no body. No server in Node serves these
 * bytes to this client faster, or stores them with less, so it bounds
 * Tessera's ratios (issue 24: GET and PUT ≥ 0.9× the floor).
 */
const FLOOR_SERVER = `
const { createServer } = require('node:net');
const { open } = require('node:fs/promises');
const { join } = require('node:path');
const dir = process.argv[1];
const server = createServer((socket) => {
  socket.setNoDelay(true);
  let head = null; // the request being received: { method, path, body, got }
  let pending = Buffer.alloc(0);
  let busy = Promise.resolve();
  socket.on('data', (chunk) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    for (;;) {
      if (head === null) {
        const end = pending.indexOf('\\r\\n\\r\\n');
        if (end < 0) return;
        const text = pending.subarray(0, end).toString('latin1');
        const [method, target] = text.split(' ', 2);
        const length = Number(/\\r\\ncontent-length: *(\\d+)/i.exec(text)?.[1] ?? 0);
        head = { method, path: target.slice(1), body: Buffer.allocUnsafe(length), got: 0 };
        pending = pending.subarray(end + 4);
      }
      const take = Math.min(head.body.length - head.got, pending.length);
      pending.copy(head.body, head.got, 0, take);
      head.got += take;
      pending = pending.subarray(take);
      if (head.got < head.body.length) return;
      const request = head;
      head = null;
      busy = busy.then(() => answer(socket, request));
    }
  });
});
async function answer(socket, { method, path, body }) {
  const [name, query] = path.split('?');
  if (method === 'PUT') {
    const f = await open(join(dir, 'floor-' + name), 'w');
    for (let at = 0; at < body.length;) at += (await f.write(body, at, body.length - at, at)).bytesWritten;
    if (query === 'commit') await f.datasync();
    await f.close();
    socket.write('HTTP/1.1 201 Created\\r\\nContent-Length: 0\\r\\n\\r\\n', 'latin1');
    return;
  }
  const f = await open(join(dir, name), 'r');
  const { size } = await f.stat();
  const out = Buffer.allocUnsafe(size);
  for (let at = 0; at < size;) at += (await f.read(out, at, size - at, at)).bytesRead;
  await f.close();
  socket.cork();
  socket.write('HTTP/1.1 200 OK\\r\\nContent-Type: application/octet-stream\\r\\nContent-Length: ' + size + '\\r\\n\\r\\n', 'latin1');
  socket.write(out);
  socket.uncork();
}
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;
const floorChild = spawn(process.execPath, ['-e', FLOOR_SERVER, plain], { stdio: ['ignore', 'pipe', 'inherit'] });
const floorPort = await new Promise((res, rej) => {
  floorChild.stdout.once('data', (d) => res(Number(String(d).trim())));
  floorChild.once('exit', (code) => rej(new Error(`floor server exited with ${code}`)));
});
const floorConnections = await Promise.all(Array.from({ length: CONCURRENCY }, () => connection(floorPort)));

/** `work(i, worker)` for every blob, CONCURRENCY workers at once (each on its own connection). */
async function each(work, conns = connections) {
  await Promise.all(conns.map(async (conn, w) => {
    for (let i = w; i < COUNT; i += CONCURRENCY) await work(i, conn);
  }));
}

async function timed(work) {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

const mbps = (seconds) => (COUNT * SIZE) / 1048576 / seconds;
const rows = [];
for (let round = 1; round <= ROUNDS; round++) {
  for (const commit of [false, true]) {
    const suffix = commit ? '?commit' : '';
    const name = (i) => `r${round}c${commit ? 1 : 0}n${i}`;
    const tWrite = await timed(() => each((i, conn) => conn.send('PUT', `/bench/${name(i)}${suffix}`, blobs[i])));
    const tRead = await timed(() => each((i, conn) => conn.send('GET', `/bench/${name(i)}`)));
    // Checked apart, untimed: every blob comes back byte-exact.
    await each(async (i, conn) => {
      if (!(await conn.send('GET', `/bench/${name(i)}`)).equals(blobs[i])) throw new Error(`blob ${name(i)} came back different`);
    });
    const fsWrite = await timed(() => each(async (i) => {
      const path = join(plain, name(i));
      if (!commit) return writeFile(path, blobs[i]);
      const f = await open(path, 'w');
      await f.writeFile(blobs[i]);
      await f.datasync();
      await f.close();
    }));
    const fsRead = await timed(() => each(async (i, conn) => {
      const f = await open(join(plain, name(i)), 'r');
      const { size } = await f.stat();
      if (conn.fsBuffer === undefined || conn.fsBuffer.length < size) conn.fsBuffer = destination(size);
      for (let at = 0; at < size;) at += (await f.read(conn.fsBuffer, at, size - at, at)).bytesRead;
      await f.close();
    }));
    const floorRead = await timed(() => each((i, conn) => conn.send('GET', `/${name(i)}`), floorConnections));
    const floorWrite = await timed(() => each((i, conn) => conn.send('PUT', `/${name(i)}${suffix}`, blobs[i]), floorConnections));
    rows.push({ round, commit, write: mbps(tWrite), read: mbps(tRead), fsWrite: mbps(fsWrite), fsRead: mbps(fsRead), floorRead: mbps(floorRead), floorWrite: mbps(floorWrite) });
  }
}

console.log(`stored content: ${COUNT} blobs of ${SIZE} bytes per run, ${CONCURRENCY} keep-alive connection(s) each sending one request at a time; plain fs = one file per blob, as many at a time`);
console.log('floor = a bare node:net server, to the same client: GET reads the plain-fs file, PUT writes it (fdatasync with ?commit); the most a server can give this client here');
console.log('round  mode     tessera write  fs write  ratio | floor write  tessera/floor | tessera read  fs read  ratio | floor read  ratio  tessera/floor   (MB/s)');
for (const r of rows) {
  console.log(`${String(r.round).padStart(5)}  ${r.commit ? 'commit' : 'buffer'}  ${r.write.toFixed(0).padStart(13)}  ${r.fsWrite.toFixed(0).padStart(8)}  ${(r.write / r.fsWrite).toFixed(2).padStart(5)} | `
    + `${r.floorWrite.toFixed(0).padStart(11)}  ${(r.write / r.floorWrite).toFixed(2).padStart(13)} | `
    + `${r.read.toFixed(0).padStart(12)}  ${r.fsRead.toFixed(0).padStart(7)}  ${(r.read / r.fsRead).toFixed(2).padStart(5)} | ${r.floorRead.toFixed(0).padStart(10)}  ${(r.floorRead / r.fsRead).toFixed(2).padStart(5)}  ${(r.read / r.floorRead).toFixed(2).padStart(13)}`);
}
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const commit of [false, true]) {
  const sel = rows.filter((r) => r.commit === commit);
  console.log(`median ${commit ? 'commit' : 'buffer'}: write ${median(sel.map((r) => r.write / r.fsWrite)).toFixed(2)}× fs, read ${median(sel.map((r) => r.read / r.fsRead)).toFixed(2)}× fs`
    + ` (floor ${median(sel.map((r) => r.floorRead / r.fsRead)).toFixed(2)}× fs); against the floor (issue 24: ≥ 0.9): PUT ${median(sel.map((r) => r.write / r.floorWrite)).toFixed(2)}×,`
    + ` GET ${median(sel.map((r) => r.read / r.floorRead)).toFixed(2)}×`);
}
for (const conn of [...connections, ...floorConnections]) conn.close();
floorChild.kill('SIGTERM');
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
rmSync(data, { recursive: true, force: true });
rmSync(plain, { recursive: true, force: true });
