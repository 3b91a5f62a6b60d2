import { connect, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { Client } from 'undici';
import { TesseraError } from '@tessera/errors';
import { clockTickMs, createHttpServer, DEFAULT_HTTP_SERVER_OPTIONS } from './http-server.js';
import { parseResponses, rawExchange } from './raw-client.js';
import type { HttpRequest, HttpResponse, HttpServer, HttpServerOptions, RequestHandler } from './types.js';

interface Running {
  server: HttpServer;
  port: number;
  url: string;
  /** Requests the handler has seen, in order. */
  calls: HttpRequest[];
  errors: unknown[];
  statuses: number[];
}

const running: Running[] = [];
const clients: Client[] = [];

function echo(req: HttpRequest): HttpResponse {
  return {
    status: 200,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      method: req.method, originalMethod: req.originalMethod, target: req.target, path: req.path, query: req.query,
      httpVersion: req.httpVersion, headers: req.headers, body: req.body.toString('latin1'),
    }),
  };
}

async function start(options: Partial<HttpServerOptions> = {}, handler: RequestHandler = echo): Promise<Running> {
  const calls: HttpRequest[] = [];
  const errors: unknown[] = [];
  const statuses: number[] = [];
  const server = createHttpServer({
    serverName: 'Tessera/test',
    onError: (err) => errors.push(err),
    onResponse: (_req, status) => statuses.push(status),
    ...options,
  }, (req) => {
    calls.push(req);
    return handler(req);
  });
  const { port } = await server.listen(0, '127.0.0.1');
  const r: Running = { server, port, url: `http://127.0.0.1:${port}`, calls, errors, statuses };
  running.push(r);
  return r;
}

function client(r: Running): Client {
  const c = new Client(r.url);
  clients.push(c);
  return c;
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.destroy()));
  await Promise.all(running.splice(0).map((r) => r.server.close(50)));
});

const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: t\r\n${extra}\r\n`;

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => { resolve = r; });
  return { promise, resolve };
}

async function until(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('options', () => {
  test('defaults are frozen and match API.md §13', () => {
    expect(Object.isFrozen(DEFAULT_HTTP_SERVER_OPTIONS)).toBe(true);
    expect(DEFAULT_HTTP_SERVER_OPTIONS).toMatchObject({
      headerBytesMax: 16384, urlBytesMax: 8192, bodyBytesMax: 64 * 1024 * 1024, headersTimeoutMs: 10000,
      bodyTimeoutMs: 30000, idleTimeoutMs: 60000, pipelineDepthMax: 64, serverName: 'Tessera/0.1.0',
    });
    expect(clockTickMs(DEFAULT_HTTP_SERVER_OPTIONS)).toBe(1000);
  });

  test('invalid options are refused with a TesseraError', () => {
    expect(() => createHttpServer({ pipelineDepthMax: 0 }, echo)).toThrow(TesseraError);
    expect(() => createHttpServer({ urlBytesMax: 20000 }, echo)).toThrow(/urlBytesMax/);
    expect(() => createHttpServer({ serverName: 'a\r\nb' }, echo)).toThrow(/serverName/);
    expect(() => createHttpServer({ bodiesBytesMax: 0 }, echo)).toThrow(/bodiesBytesMax/);
    // A certificate that is not PEM fails when the server is created, not at the first handshake.
    expect(() => createHttpServer({ tls: { cert: 'not a certificate' } }, echo)).toThrow(/'tls'.*PEM/);
  });
});

describe('requests and responses', () => {
  test('GET: handler sees the request; response has Server, Date, Content-Length', async () => {
    const r = await start();
    const res = await client(r).request({ path: '/bank/doc?q=1', method: 'GET', headers: { 'X-Thing': 'a' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers.server).toBe('Tessera/test');
    expect(res.headers.date).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
    const body = await res.body.text();
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(body));
    expect(JSON.parse(body)).toMatchObject({ method: 'GET', path: '/bank/doc', query: 'q=1', httpVersion: 11, headers: { 'x-thing': 'a' } });
    const seen = r.calls[0]!;
    expect(seen.remoteAddress).toMatch(/127\.0\.0\.1$/);
    expect(typeof seen.startedAt).toBe('bigint');
    expect(seen.startedAt <= process.hrtime.bigint()).toBe(true);
  });

  test('Tessera methods, bodies, :method mapping and the override header', async () => {
    const r = await start();
    const c = client(r);
    const update = await c.request({ path: '/t/1', method: 'UPDATE', body: '{"a":1}' });
    expect(await update.body.json()).toMatchObject({ method: 'UPDATE', body: '{"a":1}' });
    const mapped = await c.request({ path: '/bank/:search?q=x', method: 'GET' });
    expect(await mapped.body.json()).toMatchObject({ method: 'SEARCH', originalMethod: 'GET', path: '/bank/', query: 'q=x' });
    const override = await c.request({ path: '/t/1', method: 'POST', headers: { 'X-HTTP-Method-Override': 'INFO' } });
    expect(await override.body.json()).toMatchObject({ method: 'INFO', originalMethod: 'POST' });
    // An unknown override name reaches the handler (the router answers 405 with Allow for the resource).
    const unknown = await c.request({ path: '/t/1', method: 'POST', headers: { 'X-HTTP-Method-Override': 'frob' } });
    expect(await unknown.body.json()).toMatchObject({ method: 'FROB', originalMethod: 'POST' });
    expect(r.calls).toHaveLength(4);
  });

  test('method names are case-sensitive: a known method in another case is 400 http_method_case, with code, and never handled', async () => {
    const r = await start();
    const x = await rawExchange(r.port, [get('/').replace('GET', 'get'), get('/').replace('GET', 'head'), get('/')], { responses: 3 });
    expect(x.responses.map((res) => res.status)).toEqual([400, 400, 200]);
    for (const res of x.responses.slice(0, 2)) {
      expect(JSON.parse(res.body.toString())).toMatchObject({
        status: 400, type: 'Bad Request', code: 'http_method_case', message: expect.stringContaining('case-sensitive'),
      });
    }
    expect(r.calls.map((c) => c.method)).toEqual(['GET']);
  });

  test('method misuse answers 400 without the handler and keeps the connection usable', async () => {
    const r = await start();
    const x = await rawExchange(r.port, [`PUT /bank/:search HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc${get('/after')}`], { responses: 2 });
    expect(x.responses.map((res) => res.status)).toEqual([400, 200]);
    expect(JSON.parse(x.responses[0]!.body.toString())).toEqual({
      status: 400, type: 'Bad Request', code: 'http_method_mapping_misuse', message: 'Bad Request: HTTP Mappings must use GET or POST method',
    });
    expect(x.responses[0]!.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(x.closed).toBe(false);
    expect(r.calls.map((q) => q.path)).toEqual(['/after']);
  });

  test('HEAD keeps Content-Length but sends no body; the next pipelined response still frames', async () => {
    const r = await start();
    const x = await rawExchange(r.port, [`HEAD /x HTTP/1.1\r\nHost: t\r\n\r\n${get('/x')}`], { responses: 2, headRequests: [true, false] });
    expect(x.responses.map((res) => res.status)).toEqual([200, 200]);
    expect(x.responses[0]!.body.length).toBe(0);
    expect(Number(x.responses[0]!.headers['content-length'])).toBeGreaterThan(0);
    expect(JSON.parse(x.responses[1]!.body.toString())).toMatchObject({ method: 'GET' });
    expect(x.rest.length).toBe(0);
  });

  test('handler failures: thrown → 500 + onError, TesseraError keeps its status, bad responses → 500', async () => {
    const r = await start({}, (req) => {
      switch (req.path) {
        case '/throw': throw new Error('secret detail');
        case '/reject': return Promise.reject(new TesseraError('document_not_found', 404, 'Document not found'));
        case '/bad-status': return { status: 42 };
        case '/bad-header': return { status: 200, headers: { 'X-Evil': 'a\r\nSet-Cookie: x=1' } };
        default: return { status: 200, body: 'ok' };
      }
    });
    const c = client(r);
    const thrown = await c.request({ path: '/throw', method: 'GET' });
    expect(thrown.statusCode).toBe(500);
    expect(await thrown.body.json()).toEqual({ status: 500, type: 'Internal Server Error', code: 'internal_error', message: 'Internal Server Error: Internal server error' });
    const rejected = await c.request({ path: '/reject', method: 'GET' });
    expect(rejected.statusCode).toBe(404);
    expect(await rejected.body.json()).toMatchObject({ message: 'Not Found: Document not found' });
    const badStatus = await c.request({ path: '/bad-status', method: 'GET' });
    expect(badStatus.statusCode).toBe(500);
    await badStatus.body.dump();
    const badHeader = await c.request({ path: '/bad-header', method: 'GET' });
    expect(badHeader.statusCode).toBe(500);
    expect(badHeader.headers['x-evil']).toBeUndefined();
    expect(badHeader.headers['set-cookie']).toBeUndefined();
    await badHeader.body.dump();
    const ok = await c.request({ path: '/ok', method: 'GET' });
    expect(await ok.body.text()).toBe('ok');
    expect(r.errors.map((e) => (e instanceof Error ? e.message : String(e)))).toEqual([
      'secret detail', 'Document not found', 'Handler returned an invalid response: status 42',
      'Handler returned an invalid response: invalid header name or value',
    ]);
    expect(r.server.connections).toBe(1);
  });
});

describe('string bodies short and long', () => {
  test('are sent as their UTF-8 bytes with their byte length, whole and in order when pipelined', async () => {
    // Short bodies go out as one string with the head, long ones (4 KiB and more) through a buffer of their own.
    const bodies = ['é', 'x'.repeat(4095), `${'ü'.repeat(2048)}😀`, 'a'.repeat(4096), `"${'数'.repeat(9000)}"`];
    const r = await start({}, (req) => ({ status: 200, headers: { 'Content-Type': 'text/plain; charset=utf-8' }, body: bodies[Number(req.path.slice(1))]! }));
    const { responses, rest } = await rawExchange(r.port, [bodies.map((_, i) => get(`/${i}`)).join('')], { responses: bodies.length });
    expect(rest.length).toBe(0);
    expect(responses.map((res) => res.body.toString('utf8'))).toEqual(bodies);
    expect(responses.map((res) => Number(res.headers['content-length']))).toEqual(bodies.map((b) => Buffer.byteLength(b)));
  });
});

describe('connections', () => {
  test('keep-alive: sequential requests share one connection', async () => {
    const r = await start();
    const c = client(r);
    for (let i = 0; i < 3; i++) await (await c.request({ path: `/${i}`, method: 'GET' })).body.dump();
    expect(r.calls).toHaveLength(3);
    expect(r.server.connections).toBe(1);
  });

  test('Connection: close is honoured and echoed; later pipelined requests are not answered', async () => {
    const r = await start();
    const x = await rawExchange(r.port, [get('/a', 'Connection: close\r\n') + get('/b')]);
    expect(x.closed).toBe(true);
    expect(x.responses).toHaveLength(1);
    expect(x.responses[0]!.headers.connection).toBe('close');
    expect(r.calls.map((q) => q.path)).toEqual(['/a']);
  });

  test('HTTP/1.0: closes by default, stays open with Connection: keep-alive', async () => {
    const r = await start();
    const plain = await rawExchange(r.port, ['GET /a HTTP/1.0\r\n\r\n']);
    expect(plain.closed).toBe(true);
    expect(plain.responses[0]!.headers.connection).toBe('close');
    const kept = await rawExchange(r.port, ['GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n'], { responses: 2 });
    expect(kept.closed).toBe(false);
    expect(kept.responses.map((res) => res.headers.connection)).toEqual(['keep-alive', 'keep-alive']);
  });

  test('pipelining: requests in one packet are handled one at a time and answered in order', async () => {
    let active = 0;
    let maxActive = 0;
    const r = await start({}, async (req) => {
      active++;
      maxActive = Math.max(maxActive, active);
      // Later requests finish sooner if they ran concurrently.
      await new Promise((resolve) => setTimeout(resolve, 30 - Number(req.path.slice(1)) * 5));
      active--;
      return { status: 200, body: req.path };
    });
    const x = await rawExchange(r.port, [[0, 1, 2, 3, 4].map((i) => get(`/${i}`)).join('')], { responses: 5 });
    expect(x.responses.map((res) => res.body.toString())).toEqual(['/0', '/1', '/2', '/3', '/4']);
    expect(maxActive).toBe(1);
  });

  test('pipelining beyond pipelineDepthMax: reading pauses and resumes without losing a request', async () => {
    const r = await start({ pipelineDepthMax: 2 }, async (req) => {
      await new Promise((resolve) => setImmediate(resolve));
      return { status: 200, body: req.path };
    });
    const paths = Array.from({ length: 40 }, (_, i) => `/${i}`);
    const x = await rawExchange(r.port, [paths.map((p) => get(p)).join('')], { responses: 40 });
    expect(x.responses.map((res) => res.body.toString())).toEqual(paths);
    const sync = await start({ pipelineDepthMax: 3 }, (req) => ({ status: 200, body: req.path }));
    const y = await rawExchange(sync.port, [paths.map((p) => get(p)).join('')], { responses: 40 });
    expect(y.responses.map((res) => res.body.toString())).toEqual(paths);
    // The client half-closes right after sending: everything it sent is still answered.
    const z = await rawExchange(sync.port, [paths.map((p) => get(p)).join('')], { end: true });
    expect(z.responses.map((res) => res.body.toString())).toEqual(paths);
    expect(z.closed).toBe(true);
  });

  test('pipelined large bodies: parsing ahead stops at PIPELINE_BODY_BYTES_MAX and resumes', async () => {
    const r = await start({}, async (req) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return { status: 200, body: `${req.path}:${req.body.length}` };
    });
    const size = 3 * 1024 * 1024;
    const wire = [1, 2, 3, 4].map((i) => Buffer.concat([
      Buffer.from(`PUT /${i} HTTP/1.1\r\nHost: t\r\nContent-Length: ${size}\r\n\r\n`), Buffer.alloc(size, i),
    ]));
    const x = await rawExchange(r.port, wire, { responses: 4, timeoutMs: 10000 });
    expect(x.responses.map((res) => res.body.toString())).toEqual([1, 2, 3, 4].map((i) => `/${i}:${size}`));
    expect(r.calls.every((q, i) => q.body.every((b) => b === i + 1))).toBe(true);
  });

  test('large responses to pipelined requests arrive whole and in order (write backpressure)', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024, 7);
    const r = await start({}, (req) => ({ status: 200, headers: { 'X-Path': req.path }, body: big }));
    const x = await rawExchange(r.port, [get('/1') + get('/2') + get('/3')], { responses: 3, timeoutMs: 10000 });
    expect(x.responses.map((res) => [res.headers['x-path'], res.body.length])).toEqual([['/1', big.length], ['/2', big.length], ['/3', big.length]]);
    expect(x.responses.every((res) => res.body.every((b) => b === 7))).toBe(true);
  });

  test('a client vanishing mid-request never crashes the server and is not reported', async () => {
    const gate = deferred();
    const r = await start({}, async (req) => {
      if (req.path === '/slow') await gate.promise;
      return { status: 200, body: 'done' };
    });
    const socket = connect(r.port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(get('/slow'));
    await until(() => r.calls.length === 1);
    socket.resetAndDestroy();
    await until(() => r.server.connections === 0);
    gate.resolve();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const res = await client(r).request({ path: '/after', method: 'GET' });
    expect(await res.body.text()).toBe('done');
    expect(r.errors).toEqual([]);
  });
});

describe('bodies', () => {
  test('chunked request bodies: raw pieces with extensions and trailers, and from undici streams', async () => {
    const r = await start();
    const pieces = ['PUT /t/1 HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n4;x=y\r\nabcd', '\r\n3\r\nef', 'g\r\n0\r\nX-T: 1\r\n\r\n'];
    const x = await rawExchange(r.port, pieces, { responses: 1, gapMs: 20 });
    expect(JSON.parse(x.responses[0]!.body.toString())).toMatchObject({ body: 'abcdefg' });
    const res = await client(r).request({ path: '/t/2', method: 'PUT', body: Readable.from([Buffer.from('hello '), Buffer.from('world')]) });
    expect(await res.body.json()).toMatchObject({ method: 'PUT', body: 'hello world' });
  });

  test('Expect: 100-continue is answered before the body is sent', async () => {
    const r = await start();
    const socket = connect(r.port, '127.0.0.1');
    let received = '';
    const done = new Promise<void>((resolve) => {
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString('latin1');
        if (received === 'HTTP/1.1 100 Continue\r\n\r\n') socket.write('hello');
        if (received.endsWith('"body":"hello"}')) resolve();
      });
    });
    socket.write('PUT /t/1 HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n');
    await done;
    socket.destroy();
    expect(received.startsWith('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n')).toBe(true);
  });

  test('Expect: 100-continue over the body limit → 413, no 100, closed, handler never ran', async () => {
    const r = await start({ bodyBytesMax: 10 });
    const x = await rawExchange(r.port, ['PUT /t/1 HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 11\r\n\r\n']);
    expect(x.responses.map((res) => res.status)).toEqual([413]);
    expect(x.closed).toBe(true);
    expect(r.calls).toEqual([]);
  });

  test('body limit: exactly at the limit accepted; one byte over → 413, handler never ran', async () => {
    const r = await start({ bodyBytesMax: 1024 });
    const c = client(r);
    const ok = await c.request({ path: '/t/1', method: 'PUT', body: Buffer.alloc(1024, 97) });
    expect(ok.statusCode).toBe(200);
    await ok.body.dump();
    const over = await c.request({ path: '/t/2', method: 'PUT', body: Buffer.alloc(1025, 97) });
    expect(over.statusCode).toBe(413);
    expect(await over.body.json()).toEqual({
      status: 413, type: 'Payload Too Large', code: 'http_body_too_large', message: 'Payload Too Large: Request body is larger than 1024 bytes',
    });
    expect(over.headers.connection).toBe('close');
    expect(r.calls.map((q) => q.path)).toEqual(['/t/1']);
  });

  test('body limit as a function of the head (effective method and content type)', async () => {
    const r = await start({ bodyBytesMax: (head) => (head.method === 'RESTORE' ? 100 : 10) });
    const c = client(r);
    const restore = await c.request({ path: '/t/:restore', method: 'POST', body: 'x'.repeat(50) });
    expect(restore.statusCode).toBe(200);
    await restore.body.dump();
    const put = await c.request({ path: '/t/1', method: 'PUT', body: 'x'.repeat(50) });
    expect(put.statusCode).toBe(413);
    await put.body.dump();
  });
});

describe('bodiesBytesMax: the request bodies all connections hold at once', () => {
  async function until(condition: () => boolean): Promise<void> {
    for (let deadline = Date.now() + 3000; !condition(); await new Promise((r) => setTimeout(r, 5))) {
      if (Date.now() > deadline) throw new Error('condition not met');
    }
  }
  const put = (length: number) => `PUT /b HTTP/1.1\r\nHost: x\r\nContent-Length: ${length}\r\n\r\n`;

  test('a body that would go past it is answered 503 http_overloaded and its connection closed; the others go on, and every byte is given back', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    const r = await start({ bodiesBytesMax: 100_000 }, async (req) => {
      if (req.path === '/slow') await held;
      return { status: 200, body: String(req.body.length) };
    });
    // A holds 60,000 bytes (its handler waits); B's 50,000 would make 110,000.
    const a = rawExchange(r.port, [`PUT /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\n`, Buffer.alloc(60_000)], { responses: 1 });
    await until(() => r.server.bodyBytesHeld === 60_000);
    const b = await rawExchange(r.port, [put(50_000), Buffer.alloc(50_000)]);
    expect(b.closed).toBe(true);
    expect(b.responses.map((x) => x.status)).toEqual([503]);
    expect(JSON.parse(b.responses[0]!.body.toString())).toMatchObject({ status: 503, code: 'http_overloaded' });
    expect(r.server.bodyBytesHeld).toBe(60_000);
    // Within what is left: served.
    const c = await rawExchange(r.port, [put(30_000), Buffer.alloc(30_000)], { responses: 1 });
    expect(c.responses.map((x) => [x.status, x.body.toString()])).toEqual([[200, '30000']]);
    release();
    expect((await a).responses.map((x) => [x.status, x.body.toString()])).toEqual([[200, '60000']]);
    await until(() => r.server.bodyBytesHeld === 0);
    // A chunked body is counted as it comes, and a connection closed halfway gives its bytes back.
    const half = rawExchange(r.port, ['PUT /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n', `9c40\r\n${'x'.repeat(40_000)}\r\n`], { timeoutMs: 300 });
    await until(() => r.server.bodyBytesHeld === 40_000);
    await half;
    await until(() => r.server.bodyBytesHeld === 0);
  });

  test('a streamed body counts its buffer bound while its request runs', async () => {
    const r = await start({ bodiesBytesMax: 1024 * 1024 + 10, streamBody: (head) => head.method === 'RESTORE' }, async (req) => {
      let n = 0;
      for await (const piece of req.bodyStream ?? []) n += piece.length;
      return { status: 200, body: String(n) };
    });
    const one = await rawExchange(r.port, ['RESTORE /b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello'], { responses: 1 });
    expect(one.responses.map((x) => [x.status, x.body.toString()])).toEqual([[200, '5']]);
    await until(() => r.server.bodyBytesHeld === 0);
    // With a plain body already holding 20 bytes, a streamed one (1 MiB bound) does not fit.
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    const r2 = await start({ bodiesBytesMax: 1024 * 1024 + 10, streamBody: (head) => head.method === 'RESTORE' }, async (req) => {
      if (req.method === 'PUT') await held;
      return { status: 200 };
    });
    const waiting = rawExchange(r2.port, [put(20), Buffer.alloc(20)], { responses: 1 });
    await until(() => r2.server.bodyBytesHeld === 20);
    const refused = await rawExchange(r2.port, ['RESTORE /b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello']);
    expect(refused.responses.map((x) => x.status)).toEqual([503]);
    expect(refused.closed).toBe(true);
    release();
    await waiting;
    await until(() => r2.server.bodyBytesHeld === 0);
  });
});

describe('protocol errors close the connection', () => {
  test.each([
    ['Content-Length with Transfer-Encoding', 400, 'POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n'],
    ['two different Content-Length', 400, 'POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nContent-Length: 36\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n'],
    ['chunked not last', 400, 'POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked, identity\r\n\r\n'],
    ['bare LF', 400, 'GET / HTTP/1.1\nHost: t\n\n'],
    ['unknown transfer coding', 501, 'POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n'],
    ['HTTP/1.0 chunked', 411, 'POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    ['HTTP/2.0', 505, 'GET / HTTP/2.0\r\nHost: t\r\n\r\n'],
  ])('%s → %i, JSON error body, closed, handler never ran', async (_why, status, wire) => {
    const r = await start();
    const x = await rawExchange(r.port, [wire]);
    expect(x.closed).toBe(true);
    expect(x.responses.map((res) => res.status)).toEqual([status]);
    expect(x.responses[0]!.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(x.responses[0]!.headers.connection).toBe('close');
    expect(JSON.parse(x.responses[0]!.body.toString())).toMatchObject({ status });
    expect(r.calls).toEqual([]);
    expect(r.statuses).toEqual([status]);
  });

  test('a request before the bad one is still answered, in order', async () => {
    const r = await start();
    const x = await rawExchange(r.port, [`${get('/ok')}GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n`]);
    expect(x.responses.map((res) => res.status)).toEqual([200, 400]);
    expect(x.closed).toBe(true);
  });

  test('header section over headerBytesMax → 431; just under → 200', async () => {
    const r = await start({ headerBytesMax: 1024, urlBytesMax: 512 });
    const head = (n: number) => get('/', `X-Fill: ${'f'.repeat(n)}\r\n`);
    const fits = head(1024 - head(0).length);
    expect(fits.length).toBe(1024);
    const ok = await rawExchange(r.port, [fits], { responses: 1 });
    expect(ok.responses.map((res) => res.status)).toEqual([200]);
    const over = await rawExchange(r.port, [head(1025 - head(0).length)]);
    expect(over.responses.map((res) => res.status)).toEqual([431]);
    expect(over.closed).toBe(true);
    // Counted on arrival: no terminator needed.
    const endless = await rawExchange(r.port, [`GET / HTTP/1.1\r\nHost: t\r\nX: ${'f'.repeat(2000)}`]);
    expect(endless.responses.map((res) => res.status)).toEqual([431]);
  });

  test('request-target over urlBytesMax → 414; at the limit → 200', async () => {
    const r = await start({ urlBytesMax: 100 });
    const ok = await rawExchange(r.port, [get(`/${'a'.repeat(99)}`)], { responses: 1 });
    expect(ok.responses.map((res) => res.status)).toEqual([200]);
    const over = await rawExchange(r.port, [get(`/${'a'.repeat(100)}`)]);
    expect(over.responses.map((res) => res.status)).toEqual([414]);
    expect(over.closed).toBe(true);
  });
});

describe('timeouts', () => {
  test('a client sending its head one byte at a time gets 408 within the header timeout', async () => {
    const r = await start({ headersTimeoutMs: 300 });
    const wire = get('/', `X-Slow: ${'s'.repeat(40)}\r\n`);
    const x = await rawExchange(r.port, wire.split(''), { gapMs: 50, timeoutMs: 3000 });
    expect(x.responses.map((res) => res.status)).toEqual([408]);
    expect(x.closed).toBe(true);
    expect(x.elapsedMs).toBeGreaterThanOrEqual(250);
    expect(x.elapsedMs).toBeLessThan(1500);
    expect(r.calls).toEqual([]);
  });

  test('no body byte for bodyTimeoutMs → 408 and closed', async () => {
    const r = await start({ bodyTimeoutMs: 300 });
    const x = await rawExchange(r.port, ['PUT /t/1 HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nab'], { timeoutMs: 3000 });
    expect(x.responses.map((res) => res.status)).toEqual([408]);
    expect(x.closed).toBe(true);
    expect(x.elapsedMs).toBeLessThan(1500);
    expect(r.calls).toEqual([]);
  });

  test('a body trickling in faster than the body timeout is accepted', async () => {
    const r = await start({ bodyTimeoutMs: 300 });
    const x = await rawExchange(r.port, ['PUT /t/1 HTTP/1.1\r\nHost: t\r\nContent-Length: 6\r\n\r\n', 'ab', 'cd', 'ef'], { responses: 1, gapMs: 150 });
    expect(x.responses.map((res) => res.status)).toEqual([200]);
    expect(JSON.parse(x.responses[0]!.body.toString())).toMatchObject({ body: 'abcdef' });
  });

  test('a connection that sends nothing is closed quietly after headersTimeoutMs, not held for idleTimeoutMs', async () => {
    const r = await start({ headersTimeoutMs: 300, idleTimeoutMs: 60_000 });
    const x = await rawExchange(r.port, [], { timeoutMs: 3000 });
    expect(x.closed).toBe(true);
    expect(x.elapsedMs).toBeGreaterThanOrEqual(250);
    expect(x.elapsedMs).toBeLessThan(1500);
    expect(x.rest.length).toBe(0);
    expect(r.calls).toEqual([]);
  });

  test('an idle keep-alive connection is closed quietly after idleTimeoutMs', async () => {
    const r = await start({ idleTimeoutMs: 300 });
    const x = await rawExchange(r.port, [get('/')], { timeoutMs: 3000 });
    expect(x.responses.map((res) => res.status)).toEqual([200]);
    expect(x.closed).toBe(true);
    expect(x.elapsedMs).toBeGreaterThanOrEqual(250);
    expect(x.elapsedMs).toBeLessThan(1500);
    expect(x.rest.length).toBe(0);
  });
});

describe('graceful close', () => {
  test('closes idle connections at once, lets in-flight requests finish, then refuses connections', async () => {
    const gate = deferred();
    const r = await start({}, async (req) => {
      if (req.path === '/slow') await gate.promise;
      return { status: 200, body: req.path };
    });
    const slow = rawExchange(r.port, [get('/slow')], { timeoutMs: 5000 });
    await until(() => r.calls.length === 1);
    const idle = rawExchange(r.port, [get('/fast')], { timeoutMs: 5000 });
    await until(() => r.statuses.length === 1);
    expect(r.server.connections).toBe(2);
    const closing = r.server.close(5000);
    const idleResult = await idle;
    expect(idleResult.closed).toBe(true);
    expect(idleResult.responses.map((res) => res.body.toString())).toEqual(['/fast']);
    await until(() => r.server.connections === 1);
    gate.resolve();
    const slowResult = await slow;
    expect(slowResult.responses.map((res) => [res.body.toString(), res.headers.connection])).toEqual([['/slow', 'close']]);
    expect(slowResult.closed).toBe(true);
    await closing;
    expect(r.server.connections).toBe(0);
    const refused = await new Promise<string>((resolve) => {
      const s = connect(r.port, '127.0.0.1');
      s.on('connect', () => { s.destroy(); resolve('connected'); });
      s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
  });

  test('requests written just before close() are answered with Connection: close, not reset: on idle keep-alive connections and on fresh ones', async () => {
    const r = await start({}, (req) => ({ status: 200, body: req.path }));
    interface Peer { socket: Socket; received: Buffer[]; outcome: Promise<string> }
    const open = (): Promise<Peer> => new Promise((resolve) => {
      const socket = connect(r.port, '127.0.0.1');
      const received: Buffer[] = [];
      socket.on('data', (d: Buffer) => received.push(d));
      const outcome = new Promise<string>((done) => {
        socket.on('error', (err: NodeJS.ErrnoException) => done(err.code ?? 'error'));
        socket.on('close', () => done('closed'));
      });
      socket.once('connect', () => resolve({ socket, received, outcome }));
    });
    // Idle keep-alive connections: one request answered each, then nothing.
    const kept = await Promise.all(Array.from({ length: 5 }, open));
    for (const [i, p] of kept.entries()) p.socket.write(get(`/first-${i}`));
    await until(() => kept.every((p) => parseResponses(Buffer.concat(p.received)).responses.length === 1));
    const fresh = await Promise.all(Array.from({ length: 20 }, open));
    // Written and closed in one turn: the server has read none of these requests when close() begins.
    for (const [i, p] of kept.entries()) p.socket.write(get(`/kept-${i}`));
    for (const [i, p] of fresh.entries()) p.socket.write(get(`/fresh-${i}`));
    const closing = r.server.close(5000);
    const outcomes = await Promise.all([...kept, ...fresh].map((p) => p.outcome));
    expect(outcomes.every((o) => o === 'closed')).toBe(true);
    for (const [i, p] of kept.entries()) {
      const { responses } = parseResponses(Buffer.concat(p.received));
      expect(responses.map((res) => [res.status, res.body.toString()])).toEqual([[200, `/first-${i}`], [200, `/kept-${i}`]]);
      expect(responses[1]!.headers.connection).toBe('close');
    }
    for (const [i, p] of fresh.entries()) {
      const { responses } = parseResponses(Buffer.concat(p.received));
      expect(responses.map((res) => [res.status, res.body.toString(), res.headers.connection])).toEqual([[200, `/fresh-${i}`, 'close']]);
    }
    await closing;
  });

  test('pipelined requests received before close() are all answered, the last with Connection: close', async () => {
    const gate = deferred();
    const r = await start({}, async (req) => {
      if (req.path === '/1') await gate.promise;
      return { status: 200, body: req.path };
    });
    const x = rawExchange(r.port, [get('/1') + get('/2') + get('/3')], { timeoutMs: 5000 });
    await until(() => r.calls.length === 1);
    const closing = r.server.close(5000);
    gate.resolve();
    const result = await x;
    expect(result.responses.map((res) => [res.body.toString(), res.headers.connection])).toEqual([
      ['/1', undefined], ['/2', undefined], ['/3', 'close'],
    ]);
    expect(result.closed).toBe(true);
    await closing;
  });

  test('destroys what is left after the grace period', async () => {
    const r = await start({}, () => new Promise<HttpResponse>(() => undefined));
    const hung = rawExchange(r.port, [get('/never')], { timeoutMs: 5000 });
    await until(() => r.calls.length === 1);
    const startedAt = Date.now();
    await r.server.close(200);
    const elapsed = Date.now() - startedAt;
    expect(elapsed).toBeGreaterThanOrEqual(150);
    expect(elapsed).toBeLessThan(2000);
    const result = await hung;
    expect(result.closed).toBe(true);
    expect(result.responses).toEqual([]);
  });
});
