/**
 * HTTP faults against the real `tessera serve` process (issue 18, items 5, 7
 * and 8): SIGTERM drains instead of resetting requests already sent, method
 * names are case-sensitive, the default headers timeout closes a slow-header
 * client within its bound, and every error answer carries its catalogue
 * `code` (a 405 its `Allow`; a malformed JSON body sent as curl's default
 * form type is a 400 saying where it breaks).
 */
import { connect, type Socket } from 'node:net';
import { KNOWN_METHODS } from '@tessera/http';
import { call, removeDir, startServer, tempDataDir, type Server } from './harness.js';

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The first complete response in `text` (Content-Length framed), or null. */
function firstResponse(text: string): RawAnswer | null {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return null;
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  if (text.length < end + 4 + length) return null;
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine!)?.[1]), headers, body: text.slice(end + 4, end + 4 + length) };
}

/** One raw request on a fresh connection; resolves with the answer once the server closes (or resets) it. */
function rawRequest(port: number, request: string, timeoutMs = 5000): Promise<{ answer: RawAnswer | null; error: string | null }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let error: string | null = null;
    const timer = setTimeout(() => socket.destroy(), timeoutMs);
    socket.on('data', (d: Buffer) => { text += d.toString('latin1'); });
    socket.on('error', (err: NodeJS.ErrnoException) => { error = err.code ?? 'error'; });
    socket.on('close', () => { clearTimeout(timer); resolve({ answer: firstResponse(text), error }); });
    socket.on('connect', () => socket.end(request));
  });
}

describe('SIGTERM drain', () => {
  it('200 PUTs fully sent on fresh connections before SIGTERM are all answered (Connection: close), none reset; exit 0 within the grace', async () => {
    const dataDir = tempDataDir();
    const server = await startServer({ dataDir, args: ['--port', '0', '--data', dataDir, '--slow-request-ms', '600000'] });
    const exited = new Promise<number | null>((resolve) => server.process.once('exit', (code) => resolve(code)));
    try {
      expect((await call(server, 'PUT', '/drain/warm', { n: -1 })).status).toBe(200);
      const writers = 200;
      interface Writer { socket: Socket; text: string; error: string | null; closed: Promise<void> }
      const connected = await Promise.all(Array.from({ length: writers }, () => new Promise<Writer>((resolve) => {
        const socket = connect(server.port, '127.0.0.1');
        const w: Writer = { socket, text: '', error: null, closed: new Promise((done) => socket.once('close', () => done())) };
        socket.on('data', (d: Buffer) => { w.text += d.toString('latin1'); });
        socket.on('error', (err: NodeJS.ErrnoException) => { w.error = err.code ?? 'error'; });
        socket.once('connect', () => resolve(w));
      })));
      // Every request handed to the kernel in full, then the signal at once: most are still unread (or unaccepted).
      await Promise.all(connected.map((w, i) => new Promise<void>((resolve) => {
        const body = JSON.stringify({ n: i, pad: 'x'.repeat(100) });
        w.socket.write(`PUT /drain/${i} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`, () => resolve());
      })));
      const signalledAt = Date.now();
      server.process.kill('SIGTERM');
      const code = await exited;
      const exitMs = Date.now() - signalledAt;
      await Promise.all(connected.map((w) => w.closed));

      const resets = connected.filter((w) => w.error !== null).map((w) => w.error);
      expect(resets).toEqual([]);
      const answers = connected.map((w) => firstResponse(w.text));
      expect(answers.map((a) => a?.status)).toEqual(Array.from({ length: writers }, () => 200));
      expect(answers.every((a) => a!.headers.connection === 'close')).toBe(true);
      expect(code).toBe(0);
      expect(exitMs).toBeLessThan(10_000);

      const again = await startServer({ dataDir, args: ['--port', '0', '--data', dataDir] });
      try {
        for (const i of [0, 99, 199]) expect((await call(again, 'GET', `/drain/${i}`)).json).toMatchObject({ n: i });
      } finally {
        expect(await again.stop()).toBe(0);
      }
    } finally {
      await server.kill();
      removeDir(dataDir);
    }
  }, 60_000);
});

describe('strict HTTP and error codes', () => {
  let server: Server;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = tempDataDir();
    server = await startServer({ dataDir });
    expect((await call(server, 'PUT', '/faults/1', { title: 'one' })).status).toBe(200);
  });
  afterAll(async () => {
    await server.stop();
    removeDir(dataDir);
  });

  it('method names are case-sensitive: `get` is 400 http_method_case, `GET` 200; mappings and the override header stay case-insensitive', async () => {
    for (const method of ['get', 'Get', 'put']) {
      const { answer } = await rawRequest(server.port, `${method} /faults/1 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`);
      expect(answer?.status).toBe(400);
      expect(JSON.parse(answer!.body)).toMatchObject({ status: 400, code: 'http_method_case', message: expect.stringContaining('case-sensitive') });
    }
    const { answer } = await rawRequest(server.port, 'GET /faults/1 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n');
    expect(answer?.status).toBe(200);
    expect((await call(server, 'GET', '/faults/1:info')).status).toBe(200);
    expect((await call(server, 'GET', '/faults/:Count')).json).toMatchObject({ total: 1 });
    expect((await call(server, 'POST', '/faults/1', undefined, { 'x-http-method-override': 'info' })).status).toBe(200);
  });

  it('the default headers timeout closes a client trickling one header byte every 2 s at 10 s, with 408', async () => {
    const socket = connect(server.port, '127.0.0.1');
    let text = '';
    socket.on('data', (d: Buffer) => { text += d.toString('latin1'); });
    socket.on('error', () => undefined);
    const head = `GET /faults/1 HTTP/1.1\r\nHost: t\r\nX-Slow: ${'s'.repeat(40)}\r\n\r\n`;
    let startedAt = 0;
    let timer: NodeJS.Timeout | undefined;
    const closedAfter = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - startedAt)));
    socket.once('connect', () => {
      startedAt = Date.now();
      let i = 0;
      const next = (): void => {
        if (socket.destroyed || i >= head.length) return;
        socket.write(head[i++]!);
        timer = setTimeout(next, 2000);
      };
      next();
    });
    // Bounded: the old default (20 s) would still be open when this gives up.
    const giveUp = setTimeout(() => socket.destroy(), 13_000);
    const ms = await closedAfter;
    clearTimeout(giveUp);
    clearTimeout(timer);
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(firstResponse(text)!.body)).toMatchObject({ code: 'http_headers_timeout' });
    expect(ms).toBeGreaterThanOrEqual(9_900);
    expect(ms).toBeLessThan(10_600);
  }, 20_000);

  it('every error body carries its catalogue code: handler errors and the HTTP layer’s own', async () => {
    expect((await call(server, 'GET', '/faults/99')).json).toMatchObject({ status: 404, code: 'document_not_found' });
    expect((await call(server, 'PUT', '/faults/1?version=99', { title: 'x' })).json).toMatchObject({ status: 409, code: 'version_conflict' });
    expect((await call(server, 'GET', '/faults/1?commit=maybe')).json).toMatchObject({ status: 400, code: 'invalid_parameter' });
    const big = await rawRequest(server.port, `GET /faults/1 HTTP/1.1\r\nHost: t\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`);
    expect(big.answer?.status).toBe(431);
    expect(JSON.parse(big.answer!.body)).toMatchObject({ status: 431, code: 'http_headers_too_large' });
    const bad = await rawRequest(server.port, 'GET /faults/1 HTTP/1.1\r\nHost: t\r\nBad Header: x\r\n\r\n');
    expect(JSON.parse(bad.answer!.body)).toMatchObject({ status: 400, code: 'http_invalid_header' });
  });

  it('a 405 carries Allow: exactly the methods that do not answer 405 on that resource (API.md §3.1)', async () => {
    const resources: Array<[string, string]> = [['document', '/allowdoc/1'], ['index', '/allowdoc/'], ['root', '/']];
    for (const [name, path] of resources) {
      const allowed = new Set<string>();
      let allowHeader: string | undefined;
      for (const method of KNOWN_METHODS) {
        const r = await call(server, method, path, method === 'HEAD' || method === 'GET' || method === 'DELETE' ? undefined : {});
        if (r.status === 405) {
          allowHeader = String(r.headers.allow);
          if (method !== 'HEAD') expect(r.json).toMatchObject({ status: 405, code: 'method_not_allowed' });
        } else {
          allowed.add(method);
        }
      }
      allowed.delete('OPEN');
      allowed.delete('CLOSE');
      expect({ name, allow: allowHeader?.split(', ').sort() }).toEqual({ name, allow: [...allowed].sort() });
    }
    const health = await call(server, 'DELETE', '/healthz');
    expect([health.status, health.headers.allow]).toEqual([405, 'GET, HEAD']);
  });

  it("curl's default form type: valid JSON is accepted, a JSON typo is 400 body_malformed saying where (not 415)", async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    expect((await call(server, 'PUT', '/faults/2', '{"title": "two"}', form)).status).toBe(200);
    const broken = await call(server, 'PUT', '/faults/3', '{"title": ', form);
    expect(broken.status).toBe(400);
    expect(broken.json).toMatchObject({ code: 'body_malformed', message: expect.stringMatching(/at 1:11$/) });
    expect((await call(server, 'GET', '/faults/3')).status).toBe(404);
  });
});
