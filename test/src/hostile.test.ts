/**
 * Hostile clients against the real server process: each gets a clear error or
 * a closed connection, nothing is written, and the server keeps serving.
 */
import { connect, type Socket } from 'node:net';
import { call, peakRssBytes, removeDir, startServer, type Server } from './harness.js';

let server: Server;

beforeAll(async () => {
  server = await startServer({ args: ['--port', '0', '--data', (await import('./harness.js')).tempDataDir(), '--headers-timeout-ms', '1500'] });
});

afterAll(async () => {
  expect(await server.stop()).toBe(0);
  removeDir(server.dataDir);
});

/** Send raw bytes; resolve with everything received until the server closes (or `waitMs`). */
function raw(pieces: Array<string | Buffer>, options: { gapMs?: number; waitMs?: number } = {}): Promise<{ text: string; closed: boolean; ms: number }> {
  return rawTo(server.port, pieces, options);
}

function rawTo(port: number, pieces: Array<string | Buffer>, options: { gapMs?: number; waitMs?: number } = {}): Promise<{ text: string; closed: boolean; ms: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket: Socket = connect(port, '127.0.0.1');
    let text = '';
    let closed = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = () => {
      if (timer) clearTimeout(timer);
      socket.destroy();
      resolve({ text, closed, ms: Date.now() - started });
    };
    socket.on('data', (d) => { text += d.toString('latin1'); });
    socket.on('error', () => undefined);
    socket.on('close', () => { closed = true; finish(); });
    socket.on('connect', async () => {
      for (const piece of pieces) {
        if (socket.destroyed) return;
        socket.write(piece);
        if (options.gapMs) await new Promise((r) => setTimeout(r, options.gapMs));
      }
    });
    timer = setTimeout(finish, options.waitMs ?? 5000);
  });
}

it('a client sending one byte per second is cut off by the header timeout', async () => {
  const request = 'PUT /hostile/slow HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}';
  const r = await raw(request.split(''), { gapMs: 1000, waitMs: 6000 });
  expect(r.closed).toBe(true);
  expect(r.ms).toBeLessThan(4000);
  expect(r.text).toMatch(/^HTTP\/1\.1 408 /);
  expect((await call(server, 'GET', '/hostile/slow')).status).toBe(404);
}, 15_000);

it('a body of 1-byte chunks is held in few buffers: stored exact, the server\'s memory barely moves', async () => {
  // 3 MiB of content as 3 Mi chunks of one byte (18 MiB on the wire). Kept as one slice per chunk, such a body cost
  // ~115 bytes of heap per byte (350 MB here; a 100 MiB one, gigabytes); coalesced, a few MiB.
  const body = Buffer.from(Uint8Array.from({ length: 3 * 1024 * 1024 }, (_, i) => (i * 7) & 0xff));
  const before = peakRssBytes(server);
  const reply = await new Promise<string>((resolve, reject) => {
    const socket: Socket = connect(server.port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => {
      text += d.toString('latin1');
      if (text.includes('\r\n\r\n')) { socket.destroy(); resolve(text); }
    });
    socket.on('error', reject);
    socket.on('connect', async () => {
      socket.write('PUT /hostile/chunky HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n');
      const framed = Buffer.alloc(6 * 16 * 1024);
      for (let at = 0; at < body.length; at += 16 * 1024) {
        for (let i = 0; i < 16 * 1024; i++) framed.set([0x31, 0x0d, 0x0a, body[at + i]!, 0x0d, 0x0a], i * 6);
        if (!socket.write(Buffer.from(framed))) await new Promise((r) => socket.once('drain', r));
      }
      socket.write('0\r\n\r\n');
    });
  });
  expect(reply).toMatch(/^HTTP\/1\.1 20[01] /);
  expect((await call(server, 'GET', '/hostile/chunky')).bytes.equals(body)).toBe(true);
  expect(peakRssBytes(server) - before).toBeLessThan(100 * 1024 * 1024);
}, 60_000);

it('many connections each sending a large body: past --bodies-bytes-max the next one is refused 503 at once, the bytes are given back', async () => {
  const dataDir = (await import('./harness.js')).tempDataDir();
  const small = await startServer({ args: ['--port', '0', '--data', dataDir, '--body-bytes-max', String(1 << 20),
    '--content-body-bytes-max', String(1 << 20), '--bodies-bytes-max', String(2 << 20)] });
  const held = async (): Promise<number> => {
    const text = (await call(small, 'GET', '/:metrics', undefined, { accept: 'text/plain' })).text;
    return Number(/^tessera_http_request_body_bytes (\d+)/m.exec(text)?.[1]);
  };
  const sockets: Socket[] = [];
  try {
    // Two bodies of 1 MiB, 900,000 bytes of each sent, then silence: 1.8 MB held.
    for (let i = 0; i < 2; i++) {
      const socket = connect(small.port, '127.0.0.1');
      socket.on('error', () => undefined);
      sockets.push(socket);
      socket.write(`PUT /hostile/big${i} HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: ${1 << 20}\r\n\r\n`);
      socket.write(Buffer.alloc(900_000, 1));
    }
    for (let deadline = Date.now() + 5000; (await held()) < 1_800_000;) {
      if (Date.now() > deadline) throw new Error(`held ${await held()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const refused = await rawTo(small.port, [`PUT /hostile/third HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: 400000\r\n\r\n`,
      Buffer.alloc(400_000, 2)]);
    expect(refused.closed).toBe(true);
    expect(refused.text).toMatch(/^HTTP\/1\.1 503 /);
    expect(refused.text).toContain('"code":"http_overloaded"');
    expect((await call(small, 'GET', '/hostile/third')).status).toBe(404);
    for (const socket of sockets) socket.destroy();
    for (let deadline = Date.now() + 5000; (await held()) !== 0;) {
      if (Date.now() > deadline) throw new Error(`still held: ${await held()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await call(small, 'PUT', '/hostile/after', Buffer.alloc(400_000, 3), { 'content-type': 'application/octet-stream' })).status).toBe(200);
  } finally {
    for (const socket of sockets) socket.destroy();
    expect(await small.stop()).toBe(0);
    removeDir(dataDir);
  }
}, 30_000);

it('Content-Length with Transfer-Encoding is refused and the connection closed', async () => {
  const r = await raw(['POST /hostile/ HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /hostile/1 HTTP/1.1\r\nHost: x\r\n\r\n']);
  expect(r.text).toMatch(/^HTTP\/1\.1 400 /);
  expect(r.text.match(/HTTP\/1\.1/g)).toHaveLength(1);
  expect(r.closed).toBe(true);
});

it('two different Content-Lengths are refused', async () => {
  const r = await raw(['PUT /hostile/two HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x']);
  expect(r.text).toMatch(/^HTTP\/1\.1 400 /);
  expect(r.closed).toBe(true);
  expect((await call(server, 'GET', '/hostile/two')).status).toBe(404);
});

it('a header section over 16 KiB is a 431, a URL over 8 KiB a 414', async () => {
  const big = await raw([`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`]);
  expect(big.text).toMatch(/^HTTP\/1\.1 431 /);
  const long = await raw([`GET /${'a'.repeat(9 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`]);
  expect(long.text).toMatch(/^HTTP\/1\.1 414 /);
});

it('a declared body over the limit is refused before it is sent', async () => {
  const r = await raw(['PUT /hostile/huge HTTP/1.1\r\nHost: x\r\nContent-Length: 4294967296\r\nExpect: 100-continue\r\n\r\n']);
  expect(r.text).toMatch(/^HTTP\/1\.1 413 /);
  expect(r.text).not.toMatch(/100 Continue/);
});

it('a YAML body over yamlBodyBytesMax (2 MiB) is a 413 before it is sent; a YAML document under it is stored', async () => {
  // yaml builds a syntax tree of ~300 bytes per token before the value exists: the cap comes before any byte is read.
  const yamlMax = 2 * 1024 * 1024;
  const over = await raw([`PUT /hostile/yaml-big HTTP/1.1\r\nHost: x\r\nContent-Type: application/yaml\r\nContent-Length: ${yamlMax + 1}\r\nExpect: 100-continue\r\n\r\n`]);
  expect(over.text).toMatch(/^HTTP\/1\.1 413 /);
  expect(over.text).toContain('"code":"http_body_too_large"');
  expect(over.text).not.toMatch(/100 Continue/);
  // Under the cap: two strings near the document limit (1 MiB each; long words, within documentWordsMax) and 5,000 list items.
  const text = `${'abcdefghij'.repeat(90)} `.repeat(1000);
  const yaml = `title: "${text}"\nbody: "${text}"\nsizes:\n${Array.from({ length: 5000 }, (_, i) => `  - ${i}`).join('\n')}\n`;
  expect(yaml.length).toBeGreaterThan(1.7 * 1024 * 1024);
  expect(yaml.length).toBeLessThan(yamlMax);
  const put = await call(server, 'PUT', '/hostile/yaml-ok', yaml, { 'content-type': 'application/yaml' });
  expect([put.status, put.json?.code]).toEqual([200, undefined]);
  const stored = await call(server, 'GET', '/hostile/yaml-ok');
  expect(stored.json.title).toBe(text);
  expect(stored.json.sizes).toHaveLength(5000);
  expect((await call(server, 'GET', '/hostile/yaml-big')).status).toBe(404);
}, 30_000);

it('garbage gets a 4xx or a closed connection and the server keeps serving', async () => {
  for (const junk of ['\x00\x01\x02\r\n\r\n', 'GET\r\n\r\n', 'HELLO WORLD\r\n\r\n', 'GET / HTTP/9.9\r\nHost: x\r\n\r\n', '\r\n\r\n\r\n']) {
    const r = await raw([junk], { waitMs: 2000 });
    if (r.text.length > 0) expect(r.text).toMatch(/^HTTP\/1\.1 (4|5)\d\d /);
    else expect(r.closed).toBe(true);
  }
  expect((await call(server, 'PUT', '/hostile/ok', { fine: true })).status).toBe(200);
});

it('a 4 GB declared MessagePack string, a YAML alias bomb and bad UTF-8 are 400s', async () => {
  const str32 = Buffer.from([0x81, 0xa1, 0x61, 0xdb, 0xff, 0xff, 0xff, 0xff, 0x61]);
  expect((await call(server, 'PUT', '/hostile/m', str32, { 'content-type': 'application/x-msgpack' })).status).toBe(400);
  const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
  for (let i = 0; i < 9; i++) bomb.push(`${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(9).fill(`*${String.fromCharCode(97 + i)}`).join(',')}]`);
  expect((await call(server, 'PUT', '/hostile/y', bomb.join('\n'), { 'content-type': 'application/x-yaml' })).status).toBe(400);
  expect((await call(server, 'PUT', '/hostile/u', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]))).status).toBe(400);
  for (const id of ['m', 'y', 'u']) expect((await call(server, 'GET', `/hostile/${id}`)).status).toBe(404);
});
