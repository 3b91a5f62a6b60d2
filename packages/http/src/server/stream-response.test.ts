/** Streamed response bodies (`HttpResponse.bodyStream`): chunked framing, backpressure, early ends. */
import { connect, type Socket } from 'node:net';
import { Client } from 'undici';
import { createHttpServer } from './http-server.js';
import { rawExchange } from './raw-client.js';
import type { HttpServer, RequestHandler } from './types.js';

interface Running {
  server: HttpServer;
  port: number;
  errors: unknown[];
  statuses: number[];
}

const running: Running[] = [];
const clients: Client[] = [];
const sockets: Socket[] = [];

async function start(handler: RequestHandler, idleTimeoutMs = 60_000): Promise<Running> {
  const errors: unknown[] = [];
  const statuses: number[] = [];
  const server = createHttpServer({
    serverName: 'Tessera/test',
    idleTimeoutMs,
    onError: (err) => errors.push(err),
    onResponse: (_req, status) => statuses.push(status),
  }, handler);
  const { port } = await server.listen(0, '127.0.0.1');
  const r = { server, port, errors, statuses };
  running.push(r);
  return r;
}

function client(port: number): Client {
  const c = new Client(`http://127.0.0.1:${port}`);
  clients.push(c);
  return c;
}

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(clients.splice(0).map((c) => c.destroy()));
  await Promise.all(running.splice(0).map((r) => r.server.close(50)));
});

async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A producer of `count` chunks of `size` bytes (byte = chunk number), recording how far it got and whether it was closed. */
function producer(count: number, size: number) {
  const state = { pulled: 0, finished: false };
  async function* chunks(): AsyncGenerator<Uint8Array> {
    try {
      for (let i = 0; i < count; i++) {
        state.pulled++;
        yield Buffer.alloc(size, i % 256);
      }
    } finally {
      state.finished = true;
    }
  }
  return { state, chunks };
}

test('a streamed body arrives whole, chunked, and the connection serves the next request', async () => {
  const r = await start((req) => {
    if (req.path === '/next') return { status: 200, body: 'next' };
    const { chunks } = producer(50, 10_000);
    return { status: 200, headers: { 'Content-Type': 'application/octet-stream' }, bodyStream: chunks() };
  });
  const c = client(r.port);
  const res = await c.request({ method: 'GET', path: '/dump' });
  expect(res.headers['transfer-encoding']).toBe('chunked');
  expect(res.headers['content-length']).toBeUndefined();
  const body = Buffer.from(await res.body.arrayBuffer());
  expect(body.length).toBe(500_000);
  for (let i = 0; i < 50; i++) expect(body[i * 10_000]).toBe(i);
  const next = await c.request({ method: 'GET', path: '/next' });
  expect(await next.body.text()).toBe('next');
  expect(r.statuses).toEqual([200, 200]);
  expect(r.errors).toEqual([]);
});

test('the producer runs at the reader\'s pace: a client that stops reading stops the pulls', async () => {
  const { state, chunks } = producer(10_000, 64 * 1024); // 640 MiB if nothing held it back
  const r = await start(() => ({ status: 200, bodyStream: chunks() }));
  const socket = connect(r.port, '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => undefined);
  socket.write('GET /dump HTTP/1.1\r\nHost: t\r\n\r\n');
  let received = 0;
  socket.on('data', (d: Buffer) => { received += d.length; });
  await until(() => received > 0);
  socket.pause();
  // Let the socket buffers fill, then check that the producer is held back.
  await new Promise((res) => setTimeout(res, 300));
  const pulledWhilePaused = state.pulled;
  await new Promise((res) => setTimeout(res, 300));
  expect(state.pulled).toBe(pulledWhilePaused);
  // Socket buffers (both kernels' and the connection's) hold some MiB, nowhere near the 640 MiB on offer.
  expect(state.pulled).toBeLessThan(1000);
  socket.resume();
  await until(() => state.pulled > pulledWhilePaused + 10);
  // The client goes away mid-body: the producer is closed (its finally runs), nothing is reported as a fault.
  socket.destroy();
  await until(() => state.finished);
  expect(state.pulled).toBeLessThan(10_000);
});

test('a producer that fails mid-body cuts the connection: no final chunk, the failure is reported', async () => {
  const r = await start(() => ({
    status: 200,
    bodyStream: (async function* () {
      yield Buffer.from('first part;');
      throw new Error('shard went away');
    })(),
  }));
  const x = await rawExchange(r.port, ['GET /dump HTTP/1.1\r\nHost: t\r\n\r\n', 'GET /after HTTP/1.1\r\nHost: t\r\n\r\n']);
  const text = Buffer.concat([x.rest, ...x.responses.map((res) => res.body)]).toString('latin1');
  expect(x.closed).toBe(true);
  expect(text).toContain('first part;');
  expect(text).not.toContain('0\r\n\r\n');
  expect(r.errors.map((e) => (e as Error).message)).toEqual(['shard went away']);
});

test('HEAD gets the head only and the producer is closed unread; HTTP/1.0 gets the body and a close', async () => {
  const made: Array<ReturnType<typeof producer>> = [];
  const r = await start(() => {
    const p = producer(3, 5);
    made.push(p);
    return { status: 200, bodyStream: p.chunks() };
  });
  const head = await rawExchange(r.port, ['HEAD /dump HTTP/1.1\r\nHost: t\r\n\r\n'], { responses: 1, headRequests: [true] });
  expect(head.responses[0]?.status).toBe(200);
  expect(head.rest.length).toBe(0);
  expect(made[0]!.state.pulled).toBe(0);
  const old = await rawExchange(r.port, ['GET /dump HTTP/1.0\r\n\r\n']);
  expect(old.closed).toBe(true);
  // Without Content-Length the raw parser sees an empty body: what follows the head is in `rest`.
  expect(old.responses[0]?.headers.connection).toBe('close');
  expect(old.responses[0]?.headers['transfer-encoding']).toBeUndefined();
  expect(old.rest.toString('latin1')).toBe('\x00'.repeat(5) + '\x01'.repeat(5) + '\x02'.repeat(5));
});

test('a response with both body and bodyStream, or a stream yielding strings, is a handler error', async () => {
  const r = await start((req) => req.path === '/both'
    ? { status: 200, body: 'x', bodyStream: producer(1, 1).chunks() }
    : { status: 200, bodyStream: (async function* () { yield 'text' as unknown as Uint8Array; })() });
  const c = client(r.port);
  const both = await c.request({ method: 'GET', path: '/both' });
  expect(both.statusCode).toBe(500);
  await both.body.dump();
  await expect(c.request({ method: 'GET', path: '/strings' }).then((res) => res.body.text())).rejects.toThrow();
  expect(r.errors.length).toBe(2);
});
