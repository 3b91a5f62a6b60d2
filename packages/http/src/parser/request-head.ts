/**
 * The head of a request (RFC 9112 §3, §5, §6): the request line, the header
 * fields and the body framing they declare, parsed from one latin1 string.
 * Strict, so that no request is smuggled past the framing: conflicting
 * Content-Length, Content-Length with Transfer-Encoding, a Transfer-Encoding
 * that does not end in exactly one `chunked`, bare CR/LF, obs-fold and
 * whitespace before a colon are all rejected.
 */
import type { TesseraError } from '@tessera/errors';
import type { RequestHead } from '../server/types.js';
import { HTAB, SP } from './ascii.js';
import { parserErrors } from './errors.js';
import { internHeaderNameAt, internMethodAt, TOKEN } from './tokens.js';

/** A parsed head: the public RequestHead plus the framing facts the server needs. */
export class ParsedRequestHead implements RequestHead {
  method: string;
  readonly originalMethod: string;
  readonly target: string;
  path: string;
  query: string;
  readonly httpVersion: 10 | 11;
  readonly headers: Record<string, string>;
  /** The connection may stay open after this request (version default and `Connection` header). */
  readonly keepAlive: boolean;
  /** The client sent `Expect: 100-continue`. */
  readonly expectContinue: boolean;
  /** Declared body length in bytes; -1 for a chunked body; 0 for no body. */
  readonly contentLength: number;

  constructor(
    method: string, target: string, path: string, query: string, httpVersion: 10 | 11,
    headers: Record<string, string>, keepAlive: boolean, expectContinue: boolean, contentLength: number,
  ) {
    this.method = method;
    this.originalMethod = method;
    this.target = target;
    this.path = path;
    this.query = query;
    this.httpVersion = httpVersion;
    this.headers = headers;
    this.keepAlive = keepAlive;
    this.expectContinue = expectContinue;
    this.contentLength = contentLength;
  }
}

/** Decimal digits of a Content-Length kept exact; longer values are beyond any limit (2^53). */
const CONTENT_LENGTH_DIGITS_MAX = 15;

/**
 * `contentLength` of a head whose Content-Length has more digits than
 * CONTENT_LENGTH_DIGITS_MAX: no exact length is above 10^15 - 1, so this
 * value says "beyond any limit" without ambiguity.
 */
export const CONTENT_LENGTH_BEYOND_ANY = Number.MAX_SAFE_INTEGER;

/** Any control character other than HTAB, CR and LF, or a CR/LF that is not part of a CRLF pair. */
const INVALID_HEAD_CHARS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\r(?!\n)|(?<!\r)\n/;
/** Bytes not allowed in a request-target: RFC 3986 characters are all visible ASCII. */
const INVALID_TARGET_CHARS = /[^\x21-\x7e]/;
const HTTP_VERSION = /^HTTP\/\d\.\d$/;
const DIGITS = /^\d+$/;
const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i;

// Connection header flags.
const CONNECTION_CLOSE = 1;
const CONNECTION_KEEP_ALIVE = 2;

/**
 * Parse a complete head: `s` runs from the first byte to just before the
 * terminating CRLFCRLF, `p` is where the request line starts (after any
 * empty lines). Returns the head, or the error that answers it.
 */
export function parseRequestHead(s: string, p: number, urlBytesMax: number): ParsedRequestHead | TesseraError {
  if (INVALID_HEAD_CHARS.test(s)) {
    const bad = INVALID_HEAD_CHARS.exec(s)![0];
    return bad === '\r' || bad === '\n'
      ? parserErrors.lineEnding()
      : parserErrors.header(`control character 0x${bad.charCodeAt(0).toString(16).padStart(2, '0')}`);
  }

  // Request line: method SP request-target SP HTTP-version.
  let eol = s.indexOf('\r\n', p);
  if (eol === -1) eol = s.length;
  const sp1 = s.indexOf(' ', p);
  if (sp1 === -1 || sp1 >= eol) return parserErrors.requestLine('expected "METHOD target HTTP/1.1"');
  let method = internMethodAt(s, p, sp1);
  if (method === undefined) {
    method = s.slice(p, sp1);
    if (!TOKEN.test(method)) return parserErrors.requestLine('method is not a token');
  }
  let sp2 = s.indexOf(' ', sp1 + 1);
  if (sp2 === -1 || sp2 > eol) sp2 = eol;
  if (sp2 - sp1 - 1 > urlBytesMax) return parserErrors.uriTooLong(urlBytesMax);
  if (sp2 === eol) return parserErrors.requestLine('expected "METHOD target HTTP/1.1"');
  if (sp2 === sp1 + 1) return parserErrors.requestLine('empty request target');
  let httpVersion: 10 | 11;
  if (eol - sp2 - 1 === 8 && s.startsWith('HTTP/1.1', sp2 + 1)) httpVersion = 11;
  else if (eol - sp2 - 1 === 8 && s.startsWith('HTTP/1.0', sp2 + 1)) httpVersion = 10;
  else {
    const version = s.slice(sp2 + 1, eol);
    return HTTP_VERSION.test(version)
      ? parserErrors.versionNotSupported(version)
      : parserErrors.requestLine('malformed HTTP version');
  }
  const target = s.slice(sp1 + 1, sp2);
  if (INVALID_TARGET_CHARS.test(target)) return parserErrors.requestLine('invalid character in request target');

  let path: string;
  let query = '';
  if (target.charCodeAt(0) === 47 /* / */) {
    const q = target.indexOf('?');
    if (q === -1) path = target;
    else {
      path = target.slice(0, q);
      query = target.slice(q + 1);
    }
  } else if (target === '*' && method === 'OPTIONS') {
    path = '*';
  } else {
    const authority = ABSOLUTE_FORM.exec(target);
    if (authority === null) return parserErrors.requestLine('request target must be a path or an absolute URL');
    const rest = target.slice(authority[0].length);
    const q = rest.indexOf('?');
    path = q === -1 ? rest : rest.slice(0, q);
    if (path === '') path = '/';
    if (q !== -1) query = rest.slice(q + 1);
  }

  // Header fields.
  const headers = Object.create(null) as Record<string, string>;
  let contentLength = -1;
  let contentLengthText = '';
  let transferEncoding: string | null = null;
  let connection = 0;
  let expectContinue = false;
  let hosts = 0;
  let pos = eol + 2;
  while (pos < s.length) {
    let end = s.indexOf('\r\n', pos);
    if (end === -1) end = s.length;
    const c0 = s.charCodeAt(pos);
    if (c0 === SP || c0 === HTAB) return parserErrors.header('line folding (obs-fold) is not allowed');
    const colon = s.indexOf(':', pos);
    if (colon === -1 || colon >= end) return parserErrors.header('missing colon');
    let name = internHeaderNameAt(s, pos, colon);
    if (name === undefined) {
      const raw = s.slice(pos, colon);
      if (!TOKEN.test(raw)) {
        return parserErrors.header(raw === '' ? 'empty name' : 'name is not a token (no whitespace before the colon)');
      }
      name = raw.toLowerCase();
    }
    let vs = colon + 1;
    let ve = end;
    while (vs < ve && (s.charCodeAt(vs) === SP || s.charCodeAt(vs) === HTAB)) vs++;
    while (ve > vs && (s.charCodeAt(ve - 1) === SP || s.charCodeAt(ve - 1) === HTAB)) ve--;
    const value = s.slice(vs, ve);
    pos = end + 2;

    if (name === 'content-length') {
      if (!DIGITS.test(value)) return parserErrors.contentLength(value);
      let digits = value;
      if (digits.length > 1 && digits.charCodeAt(0) === 48 /* 0 */) digits = digits.replace(/^0+(?=\d)/, '');
      if (contentLength !== -1) {
        // Identical duplicates are harmless; different ones are how requests get smuggled.
        if (digits !== contentLengthText) return parserErrors.conflictingContentLength();
        continue;
      }
      contentLengthText = digits;
      contentLength = digits.length > CONTENT_LENGTH_DIGITS_MAX ? Number.POSITIVE_INFINITY : Number(digits);
      headers[name] = value;
      continue;
    }
    if (name === 'transfer-encoding') transferEncoding = transferEncoding === null ? value : `${transferEncoding}, ${value}`;
    else if (name === 'connection') connection |= connectionFlags(value);
    else if (name === 'expect') {
      if (value.length === 12 && value.toLowerCase() === '100-continue') expectContinue = true;
    } else if (name === 'host' && ++hosts > 1) return parserErrors.host('More than one Host header');
    const previous = headers[name];
    headers[name] = previous === undefined ? value : `${previous}, ${value}`;
  }
  if (httpVersion === 11 && hosts === 0) return parserErrors.host('Missing Host header (required by HTTP/1.1)');

  // Body framing (RFC 9112 §6.3).
  let bodyLength: number;
  if (transferEncoding !== null) {
    if (contentLength !== -1) return parserErrors.lengthAndEncoding();
    if (httpVersion === 10) return parserErrors.lengthRequired('Transfer-Encoding cannot frame an HTTP/1.0 request; send Content-Length');
    const codingError = checkTransferEncoding(transferEncoding);
    if (codingError !== null) return codingError;
    bodyLength = -1;
  } else if (contentLength !== -1) {
    bodyLength = contentLength;
  } else {
    if (expectContinue) return parserErrors.lengthRequired('Expect: 100-continue needs Content-Length or Transfer-Encoding');
    bodyLength = 0;
  }
  const keepAlive = httpVersion === 11
    ? (connection & CONNECTION_CLOSE) === 0
    : (connection & CONNECTION_KEEP_ALIVE) !== 0 && (connection & CONNECTION_CLOSE) === 0;

  return new ParsedRequestHead(method, target, path, query, httpVersion, headers, keepAlive, expectContinue,
    bodyLength === Number.POSITIVE_INFINITY ? CONTENT_LENGTH_BEYOND_ANY : bodyLength);
}

/** Flags of a Connection header value (a comma-separated list of tokens). */
function connectionFlags(value: string): number {
  if (value.length === 5 && value.toLowerCase() === 'close') return CONNECTION_CLOSE;
  if (value.length === 10 && value.toLowerCase() === 'keep-alive') return CONNECTION_KEEP_ALIVE;
  let flags = 0;
  for (const option of value.split(',')) {
    const o = option.trim().toLowerCase();
    if (o === 'close') flags |= CONNECTION_CLOSE;
    else if (o === 'keep-alive') flags |= CONNECTION_KEEP_ALIVE;
  }
  return flags;
}

/**
 * RFC 9112 §6.1/§6.3: the codings must end in exactly one `chunked`, and
 * Tessera decodes no other coding. Empty list elements are ignored.
 */
function checkTransferEncoding(value: string): TesseraError | null {
  if (value.length === 7 && value.toLowerCase() === 'chunked') return null;
  const codings: string[] = [];
  for (const element of value.split(',')) {
    const semicolon = element.indexOf(';');
    const coding = (semicolon === -1 ? element : element.slice(0, semicolon)).trim().toLowerCase();
    if (coding === '') {
      if (semicolon !== -1) return parserErrors.header('empty transfer coding');
      continue;
    }
    if (!TOKEN.test(coding)) return parserErrors.header('transfer coding is not a token');
    codings.push(coding);
  }
  if (codings.length === 0) return parserErrors.header('empty Transfer-Encoding');
  let chunked = 0;
  let unknown: string | null = null;
  for (const coding of codings) {
    if (coding === 'chunked') chunked++;
    else unknown ??= coding;
  }
  if (chunked > 1 || (chunked === 1 && codings[codings.length - 1] !== 'chunked')) return parserErrors.chunkedNotFinal();
  if (unknown !== null) return parserErrors.unsupportedCoding(unknown);
  return null;
}
