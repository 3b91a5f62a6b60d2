/**
 * Test support (not exported by the package): fast-check arbitraries of
 * valid HTTP/1.1 requests, their wire form, and what a correct parser must
 * report for them. Shared by the parser's and the server's property tests.
 */
import fc from 'fast-check';
import { KNOWN_METHODS } from './tokens.js';

export interface RequestModel {
  method: string;
  target: string;
  /** Header lines as sent (name spelling preserved), Host first. */
  headerLines: [string, string][];
  body: Buffer;
  framing: 'none' | 'length' | 'chunked';
  /** Chunked: the sizes the body is cut into (sum = body length). */
  chunkSizes: number[];
  chunkExtensions: boolean;
  trailers: [string, string][];
}

/** What the parser must report for a request: lower-cased, joined headers and the body bytes. */
export interface ExpectedRequest {
  method: string;
  target: string;
  headers: Record<string, string>;
  body: string;
}

const TCHARS = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".split('');
const PATH_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~%!$&\'()*+,;=@'.split('');
const VALUE_CHARS = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i));
/** Header names the model sets itself (framing, Host) or that change the method. */
const RESERVED_NAMES = new Set([
  'host', 'content-length', 'transfer-encoding', 'connection', 'expect', 'x-http-method-override', 'http-method-override',
]);

const token = (maxLength: number) => fc.string({ unit: fc.constantFrom(...TCHARS), minLength: 1, maxLength });

export const methodArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...KNOWN_METHODS.filter((m) => m !== 'HEAD')),
  // A known method in another case (`get`) is answered 400 by the server (methods are case-sensitive), not handled.
  token(12).filter((m) => m.toUpperCase() !== 'HEAD' && (KNOWN_METHODS.includes(m) || !KNOWN_METHODS.includes(m.toUpperCase()))),
);

const segment = fc.string({ unit: fc.constantFrom(...PATH_CHARS), maxLength: 12 });
export const targetArb: fc.Arbitrary<string> = fc
  .tuple(fc.array(segment, { maxLength: 4 }), fc.option(fc.string({ unit: fc.constantFrom(...PATH_CHARS, '/', '?', '='), maxLength: 20 }), { nil: undefined }))
  .map(([segments, query]) => `/${segments.join('/')}${query === undefined ? '' : `?${query}`}`);

/** A field value: visible ASCII with inner spaces and tabs, no leading/trailing whitespace (the parser trims it). */
const valueArb = fc
  .array(fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...VALUE_CHARS) }, { weight: 1, arbitrary: fc.constantFrom(' ', '\t') }), { maxLength: 30 })
  .map((chars) => chars.join('').replace(/^[ \t]+|[ \t]+$/g, ''));

const headerArb: fc.Arbitrary<[string, string]> = fc
  .tuple(token(20), valueArb)
  .filter(([name]) => !RESERVED_NAMES.has(name.toLowerCase()));

/** Cut `total` into positive sizes. */
function chunkSizesArb(total: number): fc.Arbitrary<number[]> {
  if (total === 0) return fc.constant([]);
  return fc.uniqueArray(fc.integer({ min: 1, max: Math.max(1, total - 1) }), { maxLength: Math.min(6, total - 1) })
    .map((cuts) => {
      const points = [...cuts.filter((c) => c < total)].sort((a, b) => a - b);
      const sizes: number[] = [];
      let last = 0;
      for (const p of points) {
        sizes.push(p - last);
        last = p;
      }
      sizes.push(total - last);
      return sizes;
    });
}

export const requestModelArb: fc.Arbitrary<RequestModel> = fc
  .record({
    method: methodArb,
    target: targetArb,
    hostSpelling: fc.constantFrom('Host', 'host', 'HOST', 'hOsT'),
    lengthSpelling: fc.constantFrom('Content-Length', 'content-length', 'CONTENT-length'),
    headers: fc.array(headerArb, { maxLength: 6 }),
    body: fc.uint8Array({ maxLength: 300 }),
    framing: fc.constantFrom('none', 'length', 'chunked') as fc.Arbitrary<RequestModel['framing']>,
    chunkExtensions: fc.boolean(),
    trailers: fc.array(headerArb, { maxLength: 2 }),
  })
  .chain((r) => {
    const framing = r.body.length > 0 && r.framing === 'none' ? 'length' : r.framing;
    return chunkSizesArb(framing === 'chunked' ? r.body.length : 0).map((chunkSizes): RequestModel => {
      const headerLines: [string, string][] = [[r.hostSpelling, 'example.test'], ...r.headers];
      if (framing === 'length') headerLines.push([r.lengthSpelling, String(r.body.length)]);
      if (framing === 'chunked') headerLines.push(['Transfer-Encoding', 'chunked']);
      return {
        method: r.method,
        target: r.target,
        headerLines,
        body: Buffer.from(r.body),
        framing,
        chunkSizes,
        chunkExtensions: r.chunkExtensions,
        trailers: framing === 'chunked' ? r.trailers : [],
      };
    });
  });

export function serializeRequest(m: RequestModel): Buffer {
  let head = `${m.method} ${m.target} HTTP/1.1\r\n`;
  for (const [name, value] of m.headerLines) head += `${name}: ${value}\r\n`;
  head += '\r\n';
  if (m.framing !== 'chunked') return Buffer.concat([Buffer.from(head, 'latin1'), m.body]);
  const parts: Buffer[] = [Buffer.from(head, 'latin1')];
  let offset = 0;
  for (const size of m.chunkSizes) {
    parts.push(Buffer.from(`${size.toString(16)}${m.chunkExtensions ? ';ext=1;name="v"' : ''}\r\n`, 'latin1'));
    parts.push(m.body.subarray(offset, offset + size), Buffer.from('\r\n', 'latin1'));
    offset += size;
  }
  let tail = '0\r\n';
  for (const [name, value] of m.trailers) tail += `${name}: ${value}\r\n`;
  parts.push(Buffer.from(`${tail}\r\n`, 'latin1'));
  return Buffer.concat(parts);
}

export function expectedRequest(m: RequestModel): ExpectedRequest {
  // Null prototype, as the parser's: a `__proto__` header is just a header.
  const headers = Object.create(null) as Record<string, string>;
  for (const [name, value] of m.headerLines) {
    const lower = name.toLowerCase();
    headers[lower] = headers[lower] === undefined ? value : `${headers[lower]}, ${value}`;
  }
  return { method: m.method, target: m.target, headers, body: m.body.toString('hex') };
}

/** Cut points splitting a buffer of `total` bytes into TCP-like pieces. */
export function splitPointsArb(total: number): fc.Arbitrary<number[]> {
  if (total < 2) return fc.constant([]);
  return fc.uniqueArray(fc.integer({ min: 1, max: total - 1 }), { maxLength: Math.min(40, total - 1) })
    .map((points) => points.sort((a, b) => a - b));
}

export function splitAt(buffer: Buffer, points: readonly number[]): Buffer[] {
  const pieces: Buffer[] = [];
  let last = 0;
  for (const p of points) {
    pieces.push(buffer.subarray(last, p));
    last = p;
  }
  pieces.push(buffer.subarray(last));
  return pieces;
}
