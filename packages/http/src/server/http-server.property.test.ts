import fc from 'fast-check';
import { Client } from 'undici';
import { expectedRequest, requestModelArb, serializeRequest, splitAt, splitPointsArb } from '../parser/request-arbitraries.js';
import { createHttpServer } from './http-server.js';
import { rawExchange } from './raw-client.js';
import type { HttpRequest, HttpServer } from './types.js';

let server: HttpServer;
let port: number;
const calls: HttpRequest[] = [];
const errors: unknown[] = [];

beforeAll(async () => {
  server = createHttpServer({
    headerBytesMax: 4096, urlBytesMax: 1024, bodyBytesMax: 4096, headersTimeoutMs: 150, bodyTimeoutMs: 150,
    onError: (err) => errors.push(err),
  }, (req) => {
    calls.push(req);
    return {
      status: 200,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ method: req.originalMethod, target: req.target, headers: req.headers, body: req.body.toString('hex') }),
    };
  });
  ({ port } = await server.listen(0, '127.0.0.1'));
});

afterAll(async () => {
  await server.close(100);
});

/** The server still answers a well-formed request on a fresh connection. */
async function stillServes(): Promise<void> {
  const client = new Client(`http://127.0.0.1:${port}`);
  try {
    const res = await client.request({ path: '/health', method: 'GET' });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
  } finally {
    await client.close();
  }
}

test('pipelined requests split at random points over a real socket are answered exactly, in order', async () => {
  await fc.assert(fc.asyncProperty(
    fc.array(requestModelArb, { minLength: 1, maxLength: 4 }).chain((models) => {
      const wire = Buffer.concat(models.map(serializeRequest));
      return fc.tuple(fc.constant(models), fc.constant(wire), splitPointsArb(wire.length));
    }),
    async ([models, wire, points]) => {
      const x = await rawExchange(port, splitAt(wire, points.slice(0, 12)), { responses: models.length, timeoutMs: 3000 });
      expect(x.responses.map((r) => r.status)).toEqual(models.map(() => 200));
      expect(x.responses.map((r) => JSON.parse(r.body.toString()) as unknown)).toEqual(models.map(expectedRequest));
      expect(x.rest.length).toBe(0);
    },
  ), { numRuns: 100 });
  expect(errors).toEqual([]);
});

test('random bytes get a 4xx/5xx or a closed connection, never a 2xx, and never crash the server', async () => {
  const before = calls.length;
  await fc.assert(fc.asyncProperty(
    fc.uint8Array({ minLength: 1, maxLength: 600 }),
    fc.boolean(),
    async (bytes, halfClose) => {
      const x = await rawExchange(port, [Buffer.from(bytes)], { end: halfClose, timeoutMs: 3000 });
      expect(x.closed).toBe(true);
      for (const r of x.responses) expect(r.status).toBeGreaterThanOrEqual(400);
    },
  ), { numRuns: 40 });
  expect(calls.length).toBe(before);
  await stillServes();
  expect(errors).toEqual([]);
});

test('valid requests with random byte mutations never crash the server; every answer is well-formed', async () => {
  await fc.assert(fc.asyncProperty(
    fc.array(requestModelArb, { minLength: 1, maxLength: 3 }),
    fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 3 }),
    async (models, mutations) => {
      const wire = Buffer.from(Buffer.concat(models.map(serializeRequest)));
      for (const [at, byte] of mutations) wire[at % wire.length] = byte;
      const x = await rawExchange(port, [wire], { end: true, timeoutMs: 3000 });
      expect(x.closed).toBe(true);
      expect(x.rest.length).toBe(0);
      const ok = x.responses.filter((r) => r.status < 300).length;
      expect(ok).toBeLessThanOrEqual(models.length);
      // A response announcing the close is the last one.
      const closing = x.responses.findIndex((r) => r.headers.connection === 'close');
      if (closing !== -1) expect(closing).toBe(x.responses.length - 1);
      for (const r of x.responses) expect(r.status === 200 || r.status >= 400).toBe(true);
    },
  ), { numRuns: 40 });
  await stillServes();
  expect(errors).toEqual([]);
});
