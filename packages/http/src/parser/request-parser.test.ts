import fc from 'fast-check';
import { TesseraError } from '@tessera/errors';
import { CHUNK_LINE_BYTES_MAX } from './chunked.js';
import type { ParsedRequestHead } from './request-head.js';
import { PIECE_COPY_BYTES } from '../body-pieces.js';
import { PIECES_BODY_BYTES_MIN, RequestParser, type RequestParserEvents, type RequestParserOptions } from './request-parser.js';
import {
  expectedRequest, requestModelArb, serializeRequest, splitAt, splitPointsArb, type ExpectedRequest,
} from './request-arbitraries.js';

const LIMITS: RequestParserOptions = { headerBytesMax: 1024, urlBytesMax: 256, bodyBytesMax: 1000 };

interface Seen extends ExpectedRequest {
  originalMethod: string;
  path: string;
  query: string;
  httpVersion: 10 | 11;
  keepAlive: boolean;
}

/** Records every parser event, in order. */
class Recorder implements RequestParserEvents {
  readonly requests: Seen[] = [];
  readonly heads: ParsedRequestHead[] = [];
  readonly errors: { status: number; code: string; message: string; hadHead: boolean }[] = [];
  readonly log: string[] = [];
  /** Per request: how many pieces its body came in (1: one Buffer). */
  readonly pieceCounts: number[] = [];
  begins = 0;
  continues = 0;
  onRequestHook: ((head: ParsedRequestHead) => void) | null = null;

  onMessageBegin(): void {
    this.begins++;
    this.log.push('begin');
  }

  onHead(head: ParsedRequestHead): void {
    this.heads.push(head);
    this.log.push('head');
  }

  onContinue(): void {
    this.continues++;
    this.log.push('continue');
  }

  onBodyStart(): void {
    this.log.push('body-start');
  }

  onBodyData(_data: Buffer): void {
    this.log.push('body-data');
  }

  /** Body bytes let in so far; past `bodyBytesAllowed` they are refused with a 503. */
  bodyBytesHeld = 0;
  bodyBytesAllowed = Number.POSITIVE_INFINITY;

  onBodyBytes(n: number): TesseraError | null {
    if (this.bodyBytesHeld + n > this.bodyBytesAllowed) return new TesseraError('http_overloaded', 503, 'over');
    this.bodyBytesHeld += n;
    return null;
  }

  onRequest(head: ParsedRequestHead, body: Buffer | Buffer[]): void {
    this.pieceCounts.push(Array.isArray(body) ? body.length : 1);
    this.requests.push({
      method: head.method, originalMethod: head.originalMethod, target: head.target, path: head.path, query: head.query,
      httpVersion: head.httpVersion, keepAlive: head.keepAlive, headers: { ...head.headers }, body: Buffer.concat(Array.isArray(body) ? body : [body]).toString('hex'),
    });
    this.log.push('request');
    this.onRequestHook?.(head);
  }

  onError(error: TesseraError, head: ParsedRequestHead | null): void {
    this.errors.push({ status: error.status, code: error.code, message: error.message, hadHead: head !== null });
    this.log.push('error');
  }
}

function feed(input: string | Buffer | readonly (string | Buffer)[], options: Partial<RequestParserOptions> = {}): Recorder {
  const recorder = new Recorder();
  const parser = new RequestParser({ ...LIMITS, ...options }, recorder);
  const pieces = typeof input === 'string' || Buffer.isBuffer(input) ? [input] : input;
  for (const piece of pieces) parser.push(typeof piece === 'string' ? Buffer.from(piece, 'latin1') : piece);
  return recorder;
}

/** The single error status the input produces (and that no request got through). */
function statusOf(input: string | readonly string[], options: Partial<RequestParserOptions> = {}): number | undefined {
  const r = feed(input, options);
  expect(r.errors.length).toBeLessThanOrEqual(1);
  return r.errors[0]?.status;
}

describe('RequestParser: valid requests', () => {
  test('GET with headers: lower-cased names, joined repeats, trimmed values, null prototype, split target', () => {
    const r = feed('GET /bank/doc?q=a&pretty HTTP/1.1\r\nHost: x\r\nAccept:  a/b \r\nX-Tag: 1\r\nx-tag: 2\r\n\r\n');
    expect(r.errors).toEqual([]);
    expect(r.requests).toHaveLength(1);
    const [req] = r.requests;
    expect(req).toMatchObject({ method: 'GET', target: '/bank/doc?q=a&pretty', path: '/bank/doc', query: 'q=a&pretty', httpVersion: 11, keepAlive: true, body: '' });
    expect(req!.headers).toEqual({ host: 'x', accept: 'a/b', 'x-tag': '1, 2' });
    expect(Object.getPrototypeOf(r.heads[0]!.headers)).toBeNull();
  });

  test('__proto__ and constructor are ordinary header names (no prototype pollution)', () => {
    const r = feed('GET / HTTP/1.1\r\nHost: x\r\n__proto__: a\r\nconstructor: b\r\n\r\n');
    const headers = r.heads[0]!.headers;
    expect(Object.keys(headers)).toEqual(['host', '__proto__', 'constructor']);
    expect(headers['__proto__']).toBe('a');
    expect(({} as Record<string, unknown>)['a']).toBeUndefined();
  });

  test('any token is a method, case preserved', () => {
    const r = feed(['UPDATE', 'INFO', 'SEARCH', 'COUNT', 'M-SEARCH', 'foo'].map((m) => `${m} /t/ HTTP/1.1\r\nHost: x\r\n\r\n`).join(''));
    expect(r.errors).toEqual([]);
    expect(r.requests.map((q) => q.method)).toEqual(['UPDATE', 'INFO', 'SEARCH', 'COUNT', 'M-SEARCH', 'foo']);
  });

  test('Content-Length body, then a pipelined request, across arbitrary pieces', () => {
    const wire = 'PUT /t/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET /t/1 HTTP/1.1\r\nHost: x\r\n\r\n';
    for (const pieces of [[wire], wire.split('')]) {
      const r = feed(pieces);
      expect(r.errors).toEqual([]);
      expect(r.requests.map((q) => [q.method, Buffer.from(q.body, 'hex').toString()])).toEqual([['PUT', 'hello'], ['GET', '']]);
    }
  });

  test('chunked body with extensions and trailers; identical duplicate Content-Length accepted', () => {
    const chunked = 'POST /t/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n'
      + '5;name=value\r\nhello\r\n006 ; x\r\n world\r\n0\r\nX-Checksum: abc\r\n\r\n';
    const r = feed(chunked.split(''));
    expect(r.errors).toEqual([]);
    expect(Buffer.from(r.requests[0]!.body, 'hex').toString()).toBe('hello world');
    expect(r.requests[0]!.headers['x-checksum']).toBeUndefined();

    const dup = feed('PUT /t/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\ncontent-length: 003\r\n\r\nabc');
    expect(dup.errors).toEqual([]);
    expect(dup.requests[0]!.body).toBe(Buffer.from('abc').toString('hex'));
  });

  test('empty lines before a request line are skipped (RFC 9112 §2.2)', () => {
    const r = feed('\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(r.errors).toEqual([]);
    expect(r.requests).toHaveLength(1);
  });

  test('HTTP/1.0: keep-alive only when asked; Connection: close honoured on 1.1; absolute-form and OPTIONS *', () => {
    const r = feed('GET / HTTP/1.0\r\n\r\nGET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n'
      + 'GET / HTTP/1.1\r\nHost: x\r\nConnection: foo, close\r\n\r\n'
      + 'GET http://example.test:80/a/b?c HTTP/1.1\r\nHost: x\r\n\r\nOPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(r.errors).toEqual([]);
    expect(r.requests.map((q) => [q.httpVersion, q.keepAlive])).toEqual([[10, false], [10, true], [11, false], [11, true], [11, true]]);
    expect(r.requests[3]).toMatchObject({ path: '/a/b', query: 'c' });
    expect(r.requests[4]).toMatchObject({ path: '*' });
  });

  test('limits just under are accepted: target, head and body exactly at the limit', () => {
    const target = `/${'a'.repeat(LIMITS.urlBytesMax - 1)}`;
    expect(statusOf(`GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`)).toBeUndefined();
    const base = 'GET / HTTP/1.1\r\nHost: x\r\nX: \r\n\r\n';
    const filler = 'v'.repeat(LIMITS.headerBytesMax - base.length);
    const head = `GET / HTTP/1.1\r\nHost: x\r\nX: ${filler}\r\n\r\n`;
    expect(head.length).toBe(LIMITS.headerBytesMax);
    expect(statusOf(head)).toBeUndefined();
    expect(statusOf(head.split(''))).toBeUndefined();
    const body = 'b'.repeat(LIMITS.bodyBytesMax as number);
    expect(statusOf(`PUT /t/1 HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}`)).toBeUndefined();
    expect(statusOf(`PUT /t/1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`)).toBeUndefined();
  });

  test('Expect: 100-continue is reported after the head, before the body', () => {
    const r = feed('PUT /t/1 HTTP/1.1\r\nHost: x\r\nExpect: 100-Continue\r\nContent-Length: 2\r\n\r\nok');
    expect(r.log).toEqual(['begin', 'head', 'continue', 'request']);
    const none = feed('PUT /t/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok');
    expect(none.continues).toBe(0);
  });

  test('the body limit function is called once per request with a body, with the head', () => {
    const seen: string[] = [];
    const limit = (head: { method: string; headers: Record<string, string> }): number => {
      seen.push(head.method);
      return head.headers['content-type'] === 'application/x-ndjson' ? 10 : 3;
    };
    const r = feed('GET / HTTP/1.1\r\nHost: x\r\n\r\n'
      + 'PUT /a HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Length: 8\r\n\r\n12345678'
      + 'PUT /b HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\n12345678', { bodyBytesMax: limit });
    expect(seen).toEqual(['PUT', 'PUT']);
    expect(r.requests).toHaveLength(2);
    expect(r.errors.map((e) => e.status)).toEqual([413]);
  });

  test('a body limit function returning garbage does not lift the limit', () => {
    const r = feed('PUT /a HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n1', { bodyBytesMax: () => Number.NaN });
    expect(r.errors.map((e) => e.status)).toEqual([413]);
  });

  test('pause() stops after the current request; resume() continues from held input', () => {
    const recorder = new Recorder();
    const parser = new RequestParser(LIMITS, recorder);
    recorder.onRequestHook = () => parser.pause();
    parser.push(Buffer.from('GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\nGET /3 HTTP/1.1\r\nHost: x\r\n\r\n'));
    expect(recorder.requests.map((q) => q.path)).toEqual(['/1']);
    expect(parser.idle).toBe(false);
    parser.push(Buffer.from('GET /4 HTTP/1.1\r\nHost: x\r\n\r\n'));
    expect(recorder.requests).toHaveLength(1);
    for (let i = 0; i < 3; i++) parser.resume();
    expect(recorder.requests.map((q) => q.path)).toEqual(['/1', '/2', '/3', '/4']);
    parser.resume();
    expect(parser.idle).toBe(true);
  });
});

describe('RequestParser: large bodies come in their pieces', () => {
  const big = { bodyBytesMax: 8 * PIECES_BODY_BYTES_MIN };
  const blob = Buffer.alloc(PIECES_BODY_BYTES_MIN + 12345);
  for (let i = 0; i < blob.length; i++) blob[i] = (i * 31 + 7) & 0xff;
  const head = (framing: string): Buffer => Buffer.from(`PUT /t/blob HTTP/1.1\r\nHost: x\r\n${framing}\r\n\r\n`, 'latin1');
  /** `bytes` cut into pieces of `size`. */
  const cut = (bytes: Buffer, size: number): Buffer[] => Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));

  test('a Content-Length body from PIECES_BODY_BYTES_MIN on: the socket reads as they came, never joined; one under it is one Buffer', () => {
    const r = feed([head(`Content-Length: ${blob.length}`), ...cut(blob, 64 * 1024)], big);
    expect(r.errors).toEqual([]);
    expect(r.pieceCounts).toEqual([Math.ceil(blob.length / (64 * 1024))]);
    expect(r.requests[0]!.body).toBe(blob.toString('hex'));
    const small = blob.subarray(0, PIECES_BODY_BYTES_MIN - 1);
    const s = feed([head(`Content-Length: ${small.length}`), ...cut(small, 64 * 1024)], big);
    expect(s.pieceCounts).toEqual([1]);
    expect(s.requests[0]!.body).toBe(small.toString('hex'));
  });

  test('a body sent in tiny pieces is held in few Buffers: 1-byte chunks of a chunked body, 100-byte socket reads of a Content-Length one', () => {
    // 1-byte chunks: one parser piece per body byte, ~115 bytes of heap each if kept as slices (a 64 MiB body: ~7 GB).
    const chunked = Buffer.concat([head('Transfer-Encoding: chunked'), ...Array.from(blob, (byte) => Buffer.from([0x31, 0x0d, 0x0a, byte, 0x0d, 0x0a])), Buffer.from('0\r\n\r\n')]);
    const r = feed(cut(chunked, 64 * 1024), big);
    expect(r.errors).toEqual([]);
    expect(r.requests[0]!.body).toBe(blob.toString('hex'));
    expect(r.pieceCounts[0]).toBeLessThanOrEqual(Math.ceil(blob.length / PIECE_COPY_BYTES) * 2);
    const c = feed([head(`Content-Length: ${blob.length}`), ...cut(blob, 100)], big);
    expect(c.requests[0]!.body).toBe(blob.toString('hex'));
    expect(c.pieceCounts[0]).toBeLessThanOrEqual(Math.ceil(blob.length / PIECE_COPY_BYTES) * 2);
  });
});

describe('RequestParser: errors', () => {
  const h = (lines: string) => `GET / HTTP/1.1\r\nHost: x\r\n${lines}\r\n`;
  const put = (lines: string, body = '') => `PUT /t/1 HTTP/1.1\r\nHost: x\r\n${lines}\r\n${body}`;

  test.each([
    ['bare LF in a complete head', 'GET / HTTP/1.1\nHost: x\r\n\r\n'],
    ['bare LF only (no CRLFCRLF ever)', 'GET / HTTP/1.1\nHost: x\n\n'],
    ['lone CR', 'GET / HTTP/1.1\r\nHost: x\rY: z\r\n\r\n'],
    ['obs-fold', h('X: a\r\n  folded\r\n')],
    ['whitespace before colon', h('X : a\r\n')],
    ['header name not a token', h('X(y): a\r\n')],
    ['missing colon', h('NoColon\r\n')],
    ['control character in a value', h('X: a\x01b\r\n')],
    ['method not a token', 'GE(T / HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['double space in request line', 'GET  / HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['non-ASCII in target', 'GET /\xe9 HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['target neither path nor URL', 'GET foo HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['malformed version', 'GET / HTTX/1.1\r\nHost: x\r\n\r\n'],
    ['missing version', 'GET /\r\nHost: x\r\n\r\n'],
    ['missing Host on HTTP/1.1', 'GET / HTTP/1.1\r\n\r\n'],
    ['two Host headers', h('Host: y\r\n')],
    ['Content-Length not digits', put('Content-Length: 1e3\r\n')],
    ['Content-Length negative', put('Content-Length: -1\r\n')],
    ['two different Content-Length', put('Content-Length: 3\r\nContent-Length: 4\r\n', 'abcd')],
    ['Content-Length list', put('Content-Length: 3, 4\r\n', 'abcd')],
    ['Content-Length with Transfer-Encoding', put('Content-Length: 3\r\nTransfer-Encoding: chunked\r\n', '3\r\nabc\r\n0\r\n\r\n')],
    ['chunked not last', put('Transfer-Encoding: chunked, gzip\r\n')],
    ['chunked twice', put('Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n')],
    ['chunk size not hex', put('Transfer-Encoding: chunked\r\n', 'zz\r\n')],
    ['chunk size with junk', put('Transfer-Encoding: chunked\r\n', '5 x\r\nhello\r\n')],
    ['chunk data not followed by CRLF', put('Transfer-Encoding: chunked\r\n', '3\r\nabcd\r\n')],
    ['bare LF after chunk size', put('Transfer-Encoding: chunked\r\n', '3\nabc\r\n')],
    ['chunk line too long', put('Transfer-Encoding: chunked\r\n', `3;${'e'.repeat(CHUNK_LINE_BYTES_MAX)}\r\n`)],
    ['invalid trailer', put('Transfer-Encoding: chunked\r\n', '0\r\nbad trailer\r\n\r\n')],
  ])('400: %s', (_why, input) => {
    expect(statusOf(input)).toBe(400);
    expect(statusOf(input.split(''))).toBe(400);
  });

  test('411: HTTP/1.0 with chunked; Expect: 100-continue without a length', () => {
    expect(statusOf('POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n')).toBe(411);
    expect(statusOf(put('Expect: 100-continue\r\n'))).toBe(411);
  });

  test('413: declared length over the limit fails at the head, before any body byte', () => {
    const r = feed(put(`Content-Length: ${(LIMITS.bodyBytesMax as number) + 1}\r\n`));
    expect(r.errors).toEqual([expect.objectContaining({ status: 413, code: 'http_body_too_large', hadHead: true })]);
    expect(r.continues).toBe(0);
    expect(statusOf(put('Content-Length: 99999999999999999999999\r\n'))).toBe(413);
    expect(statusOf(put('Expect: 100-continue\r\nContent-Length: 5000\r\n'))).toBe(413);
  });

  test('413: chunked body over the limit fails at the chunk size line that crosses it', () => {
    const max = LIMITS.bodyBytesMax as number;
    const r = feed(put('Transfer-Encoding: chunked\r\n', `${(max - 10).toString(16)}\r\n${'a'.repeat(max - 10)}\r\nb\r\n`));
    expect(r.errors.map((e) => e.status)).toEqual([413]);
    expect(statusOf(put('Transfer-Encoding: chunked\r\n', 'ffffffffffffffffffff\r\n'))).toBe(413);
  });

  test('414: target over the limit, whether or not the request line is complete', () => {
    const long = `/${'a'.repeat(LIMITS.urlBytesMax)}`;
    expect(statusOf(`GET ${long} HTTP/1.1\r\nHost: x\r\n\r\n`)).toBe(414);
    const r = feed(`GET ${long}`);
    expect(r.errors.map((e) => e.status)).toEqual([414]);
  });

  test('431: head over the limit, counted on arrival before CRLFCRLF; trailers count too', () => {
    const big = h(`X: ${'v'.repeat(LIMITS.headerBytesMax)}\r\n`);
    expect(statusOf(big)).toBe(431);
    // No terminator at all: the error comes as soon as one byte too many has arrived.
    const partial = `GET / HTTP/1.1\r\nHost: x\r\nX: ${'v'.repeat(LIMITS.headerBytesMax)}`;
    const r = feed(partial.slice(0, LIMITS.headerBytesMax));
    expect(r.errors).toEqual([]);
    const r2 = feed([partial.slice(0, LIMITS.headerBytesMax), 'v']);
    expect(r2.errors.map((e) => e.status)).toEqual([431]);
    const trailers = put('Transfer-Encoding: chunked\r\n', `0\r\nX: ${'t'.repeat(LIMITS.headerBytesMax)}\r\n\r\n`);
    expect(statusOf(trailers)).toBe(431);
    expect(statusOf(trailers.split(''))).toBe(431);
  });

  test('501: transfer codings other than chunked', () => {
    expect(statusOf(put('Transfer-Encoding: gzip\r\n'))).toBe(501);
    expect(statusOf(put('Transfer-Encoding: gzip, chunked\r\n'))).toBe(501);
  });

  test('505: HTTP versions other than 1.0 and 1.1', () => {
    expect(statusOf('GET / HTTP/2.0\r\nHost: x\r\n\r\n')).toBe(505);
    expect(statusOf('GET / HTTP/1.2\r\nHost: x\r\n\r\n')).toBe(505);
    expect(statusOf('GET / HTTP/0.9\r\n\r\n')).toBe(505);
  });

  test('after an error the parser is dead: nothing more is emitted', () => {
    const r = feed(['GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n', 'GET / HTTP/1.1\r\nHost: x\r\n\r\n']);
    expect(r.log).toEqual(['begin', 'error']);
  });

  test('a smuggled request inside a body is never parsed as a request', () => {
    const r = feed('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /admin HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(r.requests).toEqual([]);
    expect(r.errors.map((e) => e.status)).toEqual([400]);
  });
});

describe('RequestParser: properties', () => {
  test('any split of pipelined valid requests parses exactly as the whole', () => {
    fc.assert(fc.property(
      fc.array(requestModelArb, { minLength: 1, maxLength: 5 }).chain((models) => {
        const wire = Buffer.concat(models.map(serializeRequest));
        return fc.tuple(fc.constant(models), fc.constant(wire), splitPointsArb(wire.length));
      }),
      ([models, wire, points]) => {
        const options = { headerBytesMax: 4096, urlBytesMax: 1024, bodyBytesMax: 4096 };
        const whole = feed(wire, options);
        const split = feed(splitAt(wire, points), options);
        expect(whole.errors).toEqual([]);
        expect(whole.requests.map(({ method, target, headers, body }) => ({ method, target, headers, body })))
          .toEqual(models.map(expectedRequest));
        expect(split.requests).toEqual(whole.requests);
        expect(split.errors).toEqual([]);
      },
    ), { numRuns: 300 });
  });

  test('random bytes never throw; the parser reports at most one error, 4xx/5xx, and nothing after it', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 2000 }), splitPointsArb(2000), (bytes, points) => {
      const wire = Buffer.from(bytes);
      const r = feed(splitAt(wire, points.filter((p) => p < wire.length)), LIMITS);
      expect(r.errors.length).toBeLessThanOrEqual(1);
      for (const e of r.errors) expect(e.status >= 400 && e.status <= 599).toBe(true);
      if (r.errors.length === 1) expect(r.log[r.log.length - 1]).toBe('error');
    }), { numRuns: 500 });
  });

  test('valid requests with random byte mutations never throw and never yield more requests than sent', () => {
    fc.assert(fc.property(
      fc.array(requestModelArb, { minLength: 1, maxLength: 3 }),
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
      (models, mutations) => {
        const wire = Buffer.from(Buffer.concat(models.map(serializeRequest)));
        for (const [at, byte] of mutations) wire[at % wire.length] = byte;
        const r = feed(wire, { headerBytesMax: 4096, urlBytesMax: 1024, bodyBytesMax: 4096 });
        expect(r.requests.length + r.errors.length).toBeLessThanOrEqual(models.length + 1);
        for (const e of r.errors) expect(e.status >= 400 && e.status <= 599).toBe(true);
      },
    ), { numRuns: 500 });
  });
});

/** Streams every body (onHead returns true), granting `step` bytes of credit at a time. */
class StreamRecorder extends Recorder {
  readonly bodies: string[] = [];
  readonly pieceSizes: number[] = [];
  private current: Buffer[] = [];
  private credit = 0;
  parser: RequestParser | null = null;

  constructor(private readonly step: number) {
    super();
  }

  override onHead(head: ParsedRequestHead): boolean {
    super.onHead(head);
    return true;
  }

  override onBodyStart(): void {
    super.onBodyStart();
    this.current = [];
    this.grant();
  }

  override onBodyData(data: Buffer): void {
    super.onBodyData(data);
    expect(data.length).toBeGreaterThan(0);
    expect(data.length).toBeLessThanOrEqual(this.credit);
    this.credit -= data.length;
    this.pieceSizes.push(data.length);
    this.current.push(Buffer.from(data));
  }

  override onRequest(head: ParsedRequestHead, body: Buffer | Buffer[]): void {
    expect(Buffer.isBuffer(body) && body.length === 0).toBe(true);
    this.bodies.push(Buffer.concat(this.current).toString('hex'));
    super.onRequest(head, body);
  }

  grant(): void {
    this.credit = this.step;
    this.parser!.grantBodyBytes(this.step);
  }

  /** Push each piece; whenever the parser pauses for credit, grant more and resume. */
  feed(pieces: readonly Buffer[]): void {
    const parser = this.parser!;
    for (const piece of pieces) {
      parser.push(piece);
      while (parser.isPaused) {
        expect(parser.streamCredit).toBe(0);
        this.grant();
        parser.resume();
      }
    }
  }
}

function streamParser(step: number, options: Partial<RequestParserOptions> = {}): { r: StreamRecorder; parser: RequestParser } {
  const r = new StreamRecorder(step);
  const parser = new RequestParser({ ...LIMITS, ...options }, r);
  r.parser = parser;
  return { r, parser };
}

describe('RequestParser: streamed bodies', () => {
  test('Content-Length body: handed on within the credit, paused at zero credit, resumed after a grant', () => {
    const { r, parser } = streamParser(30);
    parser.push(Buffer.from(`PUT /t HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n${'a'.repeat(100)}GET /n HTTP/1.1\r\nHost: x\r\n\r\n`));
    expect(r.pieceSizes).toEqual([30]);
    expect(parser.isPaused).toBe(true);
    expect(parser.bodyBytesLeft).toBe(70);
    expect(r.requests).toHaveLength(0);
    while (parser.isPaused) {
      r.grant();
      parser.resume();
    }
    expect(r.pieceSizes).toEqual([30, 30, 30, 10]);
    expect(r.requests.map((q) => q.target)).toEqual(['/t', '/n']);
    expect(r.bodies).toEqual([Buffer.from('a'.repeat(100)).toString('hex'), '']);
    expect(r.log).toEqual(['begin', 'head', 'body-start', 'body-data', 'body-data', 'body-data', 'body-data', 'request',
      'begin', 'head', 'body-start', 'request']);
    expect(parser.bodyBytesLeft).toBe(0);
  });

  test('chunked body: only data bytes are handed on (no sizes, extensions or trailers); no 100-continue event', () => {
    const { r, parser } = streamParser(1000);
    r.feed([Buffer.from('PUT /t HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n4;a=b\r\nabcd\r\n'),
      Buffer.from('3\r\nefg\r\n0\r\nX-T: 1\r\n\r\n')]);
    expect(parser.bodyBytesLeft).toBe(0);
    expect(r.bodies).toEqual([Buffer.from('abcdefg').toString('hex')]);
    expect(r.continues).toBe(0);
    expect(r.errors).toEqual([]);
  });

  test('limits still apply: Content-Length over the limit fails before onBodyStart; a chunked overflow fails while counting', () => {
    const over = streamParser(1000);
    over.r.feed([Buffer.from('PUT /t HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n')]);
    expect(over.r.log).toEqual(['begin', 'head', 'error']);
    expect(over.r.errors.map((e) => e.status)).toEqual([413]);
    const chunked = streamParser(5000);
    chunked.r.feed([Buffer.from(`PUT /t HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n258\r\n${'a'.repeat(600)}\r\n258\r\n`)]);
    expect(chunked.r.pieceSizes).toEqual([600]);
    expect(chunked.r.errors.map((e) => [e.status, e.code])).toEqual([[413, 'http_body_too_large']]);
  });

  test('any split of pipelined requests and any credit step yield the same bodies', () => {
    fc.assert(fc.property(
      fc.array(requestModelArb, { minLength: 1, maxLength: 3 }).chain((models) => {
        const wire = Buffer.concat(models.map(serializeRequest));
        return fc.tuple(fc.constant(models), fc.constant(wire), splitPointsArb(wire.length), fc.integer({ min: 1, max: 400 }));
      }),
      ([models, wire, points, step]) => {
        const { r } = streamParser(step, { headerBytesMax: 4096, urlBytesMax: 1024, bodyBytesMax: 4096 });
        r.feed(splitAt(wire, points));
        expect(r.errors).toEqual([]);
        expect(r.bodies).toEqual(models.map((m) => m.body.toString('hex')));
        expect(r.requests.map((q) => q.target)).toEqual(models.map(expectedRequest).map((e) => e.target));
      },
    ), { numRuns: 300 });
  });
});
