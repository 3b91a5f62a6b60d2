/**
 * Push parser for HTTP/1.1 requests (RFC 9112), fed the socket's Buffers.
 *
 * Why hand-written: Node's `http` (llhttp) rejects the methods Tessera speaks
 * (UPDATE, INFO, SEARCH…). The parser finds the end of the head with one
 * native `indexOf("\r\n\r\n")`, parses the head from a single latin1 string,
 * and hands bodies on as slices of the socket's Buffers: no per-byte work in
 * JavaScript on the common path and no allocation per byte anywhere.
 *
 * Framing is strict so that no request can be smuggled past it: conflicting
 * Content-Length, Content-Length with Transfer-Encoding, a Transfer-Encoding
 * that does not end in exactly one `chunked`, bare CR/LF, obs-fold and
 * whitespace before a colon are all rejected. Every limit is checked as bytes
 * arrive, before memory is spent on them. After an error the parser is dead:
 * it ignores further input, and the caller answers and closes the connection.
 *
 * Streamed bodies: when `onHead` returns true, the body is not gathered but
 * handed on piece by piece (`onBodyData`), each piece a slice of a socket
 * Buffer, within a byte credit the listener grants (`grantBodyBytes`). With
 * the credit spent the parser pauses itself, holding the unparsed input, so
 * a listener that stops granting stops the reading of the body.
 */
import type { TesseraError } from '@tessera/errors';
import type { RequestHead } from '../server/types.js';
import { parserErrors } from './errors.js';
import { internHeaderNameAt, internMethodAt, TOKEN } from './tokens.js';

export interface RequestParserOptions {
  /** Request line + header section (and, later, trailers), bytes; beyond → 431. */
  headerBytesMax: number;
  /** Request-target bytes; beyond → 414. */
  urlBytesMax: number;
  /** Body bytes, or a function of the parsed head called once per request with a body; beyond → 413. */
  bodyBytesMax: number | ((head: RequestHead) => number);
}

/**
 * What the parser reports, in order, for each request. An object with
 * methods rather than closures so the server's connection can implement it
 * directly (no allocation per connection or request).
 */
export interface RequestParserEvents {
  /** The first byte of a new request arrived (the header timer starts). */
  onMessageBegin(): void;
  /**
   * The head is parsed and its framing is valid; the body (if any) follows.
   * The listener may rewrite `method`, `path` and `query` (method override):
   * the body limit is chosen after this call, from the head as left by it.
   * Returning true streams the body: onBodyStart, onBodyData…, then
   * onRequest with an empty body.
   */
  onHead(head: ParsedRequestHead): boolean | void;
  /**
   * `Expect: 100-continue` with a body within the limit: the client waits for `100 Continue`.
   * Not called for a streamed body (onBodyStart): the listener decides when to answer.
   */
  onContinue(head: ParsedRequestHead): void;
  /**
   * A streamed body is within the limit (Content-Length checked; a chunked body is counted as it comes)
   * and is about to be read; also called for a streamed request without a body. The credit is 0 until granted.
   */
  onBodyStart(head: ParsedRequestHead): void;
  /** Bytes of a streamed body, in order; never empty, never more than the credit left. */
  onBodyData(data: Buffer): void;
  /** A complete request. `body` may be a slice of a socket Buffer (empty for a streamed body). */
  onRequest(head: ParsedRequestHead, body: Buffer): void;
  /** A protocol error; the parser is dead afterwards. `head` is set when the error came after the head. */
  onError(error: TesseraError, head: ParsedRequestHead | null): void;
}

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

/**
 * Longest chunk-size line (size, extensions, CRLF) accepted. Extensions are
 * ignored, so there is no reason to buffer more; longer → 400.
 */
export const CHUNK_LINE_BYTES_MAX = 4096;

/** Hex digits beyond leading zeros in a chunk size: 12 digits = 2^48 bytes, above any body limit. */
const CHUNK_SIZE_DIGITS_MAX = 12;

/** Decimal digits of a Content-Length kept exact; longer values are beyond any limit (2^53). */
const CONTENT_LENGTH_DIGITS_MAX = 15;

// Parser states.
const HEAD = 0;
const BODY_LENGTH = 1;
const CHUNK_SIZE = 2;
const CHUNK_DATA = 3;
const CHUNK_DATA_END = 4;
const TRAILERS = 5;
const DEAD = 6;

const CRLFCRLF = Buffer.from('\r\n\r\n', 'latin1');
const EMPTY_BODY = Buffer.alloc(0);
const CR = 13;
const LF = 10;
const SP = 32;
const HTAB = 9;

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

/** Content-Length bodies from this size on are received into one buffer of that size (RequestParser.whole). */
const WHOLE_BODY_BYTES_MIN = 1024 * 1024;

export class RequestParser {
  private readonly headerBytesMax: number;
  private readonly urlBytesMax: number;
  private readonly bodyBytesMax: number | ((head: RequestHead) => number);
  private readonly events: RequestParserEvents;

  private state = HEAD;
  private paused = false;
  /** Input kept while paused (the unparsed rest of a chunk). */
  private held: Buffer | null = null;
  /** A request's first byte has been seen and its end has not. */
  private begun = false;

  /** Head bytes spanning several chunks, copied here (capacity grows up to headerBytesMax + 4). */
  private headAcc: Buffer | null = null;
  private headAccLen = 0;
  /** Position in headAcc up to which bare LFs have been checked. */
  private headLfChecked = 0;
  /** Empty lines skipped before this request line (RFC 9112 §2.2); they count toward the head limit. */
  private skippedBytes = 0;
  /** Bytes of the current head, counted again with trailers against headerBytesMax. */
  private headBytes = 0;

  private head: ParsedRequestHead | null = null;
  private bodyLimit = 0;
  /** BODY_LENGTH: bytes still expected. CHUNK_DATA: bytes left in the current chunk. */
  private remaining = 0;
  /** Body pieces of the current request when it spans chunks or is chunked. */
  private readonly parts: Buffer[] = [];
  /**
   * A large Content-Length body is copied into one buffer of its announced
   * size as it arrives, instead of collecting the socket's chunks and joining
   * them at the end: the body is held once, not twice (a 50 MiB upload).
   * Unwritten pages of the buffer are not resident, so an announced size
   * costs memory only as the bytes come.
   */
  private whole: Buffer | null = null;
  private bodyBytes = 0;
  /** CHUNK_DATA_END: whether the CR after the chunk data has been seen. */
  private sawChunkCr = false;
  private trailerBytes = 0;
  /** The current body is handed on through onBodyData instead of gathered in `parts`. */
  private streaming = false;
  /** Streamed body bytes the listener will still take before the parser pauses itself. */
  private bodyCredit = 0;

  /** A chunk-size or trailer line spanning chunks, copied here. */
  private lineAcc: Buffer | null = null;
  private lineAccLen = 0;
  /** The last complete line read by readLine: bytes [lineStart, lineEnd) of lineBuf, CRLF excluded. */
  private lineBuf: Buffer = EMPTY_BODY;
  private lineStart = 0;
  private lineEnd = 0;

  constructor(options: RequestParserOptions, events: RequestParserEvents) {
    this.headerBytesMax = options.headerBytesMax;
    this.urlBytesMax = options.urlBytesMax;
    this.bodyBytesMax = options.bodyBytesMax;
    this.events = events;
  }

  /** No request is partly received or held back (safe to close the connection). */
  get idle(): boolean {
    return this.state === HEAD && !this.begun && this.held === null;
  }

  /** A body is being received (the body timeout applies). */
  get inBody(): boolean {
    return this.state !== HEAD && this.state !== DEAD;
  }

  get isPaused(): boolean {
    return this.paused;
  }

  get isDead(): boolean {
    return this.state === DEAD;
  }

  /** Body bytes not yet parsed: exact for Content-Length, -1 while a chunked body is read, 0 otherwise. */
  get bodyBytesLeft(): number {
    if (this.state === BODY_LENGTH) return this.remaining;
    return this.state >= CHUNK_SIZE && this.state <= TRAILERS ? -1 : 0;
  }

  /** Streamed body bytes that may still be handed on before the parser pauses itself. */
  get streamCredit(): number {
    return this.bodyCredit;
  }

  /**
   * Set how many more streamed body bytes the listener takes (Infinity: all,
   * e.g. while discarding). Does not resume a paused parser; call resume().
   */
  grantBodyBytes(bytes: number): void {
    this.bodyCredit = bytes;
  }

  /** The head of the request whose body is being received, if any. */
  get currentHead(): ParsedRequestHead | null {
    return this.head;
  }

  push(chunk: Buffer): void {
    if (this.state === DEAD || chunk.length === 0) return;
    if (this.held !== null) {
      this.held = Buffer.concat([this.held, chunk]);
      if (this.paused) return;
      const held = this.held;
      this.held = null;
      this.execute(held);
      return;
    }
    if (this.paused) {
      this.held = chunk;
      return;
    }
    this.execute(chunk);
  }

  /** Stop emitting after the current event; further input is held until resume(). */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.state === DEAD || this.held === null) return;
    const held = this.held;
    this.held = null;
    this.execute(held);
  }

  /** Drop everything and ignore further input. */
  destroy(): void {
    this.state = DEAD;
    this.release();
  }

  private release(): void {
    this.held = null;
    this.head = null;
    this.parts.length = 0;
    this.whole = null;
    this.headAcc = null;
    this.lineAcc = null;
    this.lineBuf = EMPTY_BODY;
  }

  private fail(error: TesseraError): void {
    const head = this.head;
    this.state = DEAD;
    this.release();
    this.events.onError(error, head);
  }

  private execute(chunk: Buffer): void {
    const len = chunk.length;
    let off = 0;
    while (off < len) {
      if (this.paused) {
        this.held = off === 0 ? chunk : chunk.subarray(off);
        return;
      }
      switch (this.state) {
        case HEAD: off = this.readHead(chunk, off); break;
        case BODY_LENGTH: off = this.readBodyLength(chunk, off); break;
        case CHUNK_SIZE: off = this.readChunkSize(chunk, off); break;
        case CHUNK_DATA: off = this.readChunkData(chunk, off); break;
        case CHUNK_DATA_END: off = this.readChunkDataEnd(chunk, off); break;
        case TRAILERS: off = this.readTrailer(chunk, off); break;
        default: return;
      }
    }
  }

  // ── Head ──────────────────────────────────────────────────────────────

  private readHead(chunk: Buffer, off: number): number {
    if (!this.begun) {
      this.begun = true;
      this.events.onMessageBegin();
      if (this.state !== HEAD) return chunk.length;
    }
    const prevLen = this.headAccLen;
    if (prevLen === 0) {
      // Common case: the whole head is in this chunk.
      const idx = chunk.indexOf(CRLFCRLF, off);
      if (idx !== -1) {
        const headEnd = idx + 4;
        if (headEnd - off + this.skippedBytes > this.headerBytesMax) {
          this.failHeadTooLarge(chunk, off, headEnd);
          return chunk.length;
        }
        this.parseHead(chunk.toString('latin1', off, idx), headEnd - off);
        return headEnd;
      }
    }
    // The head spans chunks: append, then search from just before the new bytes
    // (when prevLen is 0 the chunk itself was searched above).
    const n = this.appendHead(chunk, off);
    const acc = this.headAcc!;
    let idx = prevLen === 0 ? -1 : acc.indexOf(CRLFCRLF, prevLen > 3 ? prevLen - 3 : 0);
    // Bytes past headAccLen are stale; a match reaching into them is no match.
    if (idx !== -1 && idx + 4 > this.headAccLen) idx = -1;
    if (idx !== -1) {
      const headEnd = idx + 4;
      this.headAccLen = 0;
      this.headLfChecked = 0;
      if (headEnd + this.skippedBytes > this.headerBytesMax) {
        this.failHeadTooLarge(acc, 0, headEnd);
        return chunk.length;
      }
      this.parseHead(acc.toString('latin1', 0, idx), headEnd);
      return off + (headEnd - prevLen);
    }
    this.checkPartialHead();
    return off + n;
  }

  /** Copy as much of chunk[off..] as the head may still hold into headAcc; returns the bytes copied. */
  private appendHead(chunk: Buffer, off: number): number {
    // Capacity headerBytesMax + 4: enough to see a terminator that ends exactly at the limit.
    const capacityMax = this.headerBytesMax + 4;
    const n = Math.min(chunk.length - off, capacityMax - this.headAccLen);
    const needed = this.headAccLen + n;
    let acc = this.headAcc;
    if (acc === null || acc.length < needed) {
      const grown = Buffer.allocUnsafe(Math.min(capacityMax, Math.max(1024, needed, (acc?.length ?? 0) * 2)));
      if (acc !== null) acc.copy(grown, 0, 0, this.headAccLen);
      acc = this.headAcc = grown;
    }
    chunk.copy(acc, this.headAccLen, off, off + n);
    this.headAccLen = needed;
    return n;
  }

  /**
   * Check, on arrival, what can be checked before the head is complete: bare
   * LF (a client speaking bare LF would otherwise wait for the timeout), the
   * request-target length and the head size.
   */
  private checkPartialHead(): void {
    const acc = this.headAcc!;
    const len = this.headAccLen;
    let lf = acc.indexOf(LF, this.headLfChecked);
    while (lf !== -1 && lf < len) {
      if (lf === 0 || acc[lf - 1] !== CR) return this.fail(parserErrors.lineEnding());
      lf = acc.indexOf(LF, lf + 1);
    }
    this.headLfChecked = len;
    if (this.targetTooLong(acc, 0, len)) return this.fail(parserErrors.uriTooLong(this.urlBytesMax));
    if (len + this.skippedBytes > this.headerBytesMax) return this.fail(parserErrors.headersTooLarge(this.headerBytesMax));
  }

  /** Whether the (possibly incomplete) request line in buf[start, end) has a target over urlBytesMax. */
  private targetTooLong(buf: Buffer, start: number, end: number): boolean {
    while (start + 1 < end && buf[start] === CR && buf[start + 1] === LF) start += 2;
    const sp1 = buf.indexOf(SP, start);
    if (sp1 === -1 || sp1 >= end) return false;
    let stop = buf.indexOf(SP, sp1 + 1);
    if (stop === -1 || stop > end) stop = end;
    const cr = buf.indexOf(CR, sp1 + 1);
    if (cr !== -1 && cr < stop) stop = cr;
    return stop - sp1 - 1 > this.urlBytesMax;
  }

  private failHeadTooLarge(buf: Buffer, start: number, end: number): void {
    this.fail(this.targetTooLong(buf, start, end)
      ? parserErrors.uriTooLong(this.urlBytesMax)
      : parserErrors.headersTooLarge(this.headerBytesMax));
  }

  /**
   * Parse a complete head. `s` runs from the first byte to just before the
   * terminating CRLFCRLF; `bytes` counts the head including that terminator.
   */
  private parseHead(s: string, bytes: number): void {
    let p = 0;
    while (s.charCodeAt(p) === CR && s.charCodeAt(p + 1) === LF) p += 2;
    if (p >= s.length) {
      // Only empty lines so far: skip them, the request line is still to come.
      this.skippedBytes += bytes;
      return;
    }
    if (INVALID_HEAD_CHARS.test(s)) {
      const bad = INVALID_HEAD_CHARS.exec(s)![0];
      this.fail(bad === '\r' || bad === '\n'
        ? parserErrors.lineEnding()
        : parserErrors.header(`control character 0x${bad.charCodeAt(0).toString(16).padStart(2, '0')}`));
      return;
    }
    const headBytes = bytes + this.skippedBytes;
    this.skippedBytes = 0;

    // Request line: method SP request-target SP HTTP-version.
    let eol = s.indexOf('\r\n', p);
    if (eol === -1) eol = s.length;
    const sp1 = s.indexOf(' ', p);
    if (sp1 === -1 || sp1 >= eol) return this.fail(parserErrors.requestLine('expected "METHOD target HTTP/1.1"'));
    let method = internMethodAt(s, p, sp1);
    if (method === undefined) {
      method = s.slice(p, sp1);
      if (!TOKEN.test(method)) return this.fail(parserErrors.requestLine('method is not a token'));
    }
    let sp2 = s.indexOf(' ', sp1 + 1);
    if (sp2 === -1 || sp2 > eol) sp2 = eol;
    if (sp2 - sp1 - 1 > this.urlBytesMax) return this.fail(parserErrors.uriTooLong(this.urlBytesMax));
    if (sp2 === eol) return this.fail(parserErrors.requestLine('expected "METHOD target HTTP/1.1"'));
    if (sp2 === sp1 + 1) return this.fail(parserErrors.requestLine('empty request target'));
    let httpVersion: 10 | 11;
    if (eol - sp2 - 1 === 8 && s.startsWith('HTTP/1.1', sp2 + 1)) httpVersion = 11;
    else if (eol - sp2 - 1 === 8 && s.startsWith('HTTP/1.0', sp2 + 1)) httpVersion = 10;
    else {
      const version = s.slice(sp2 + 1, eol);
      return this.fail(HTTP_VERSION.test(version)
        ? parserErrors.versionNotSupported(version)
        : parserErrors.requestLine('malformed HTTP version'));
    }
    const target = s.slice(sp1 + 1, sp2);
    if (INVALID_TARGET_CHARS.test(target)) return this.fail(parserErrors.requestLine('invalid character in request target'));

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
      if (authority === null) return this.fail(parserErrors.requestLine('request target must be a path or an absolute URL'));
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
      if (c0 === SP || c0 === HTAB) return this.fail(parserErrors.header('line folding (obs-fold) is not allowed'));
      const colon = s.indexOf(':', pos);
      if (colon === -1 || colon >= end) return this.fail(parserErrors.header('missing colon'));
      let name = internHeaderNameAt(s, pos, colon);
      if (name === undefined) {
        const raw = s.slice(pos, colon);
        if (!TOKEN.test(raw)) {
          return this.fail(parserErrors.header(raw === '' ? 'empty name' : 'name is not a token (no whitespace before the colon)'));
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
        if (!DIGITS.test(value)) return this.fail(parserErrors.contentLength(value));
        let digits = value;
        if (digits.length > 1 && digits.charCodeAt(0) === 48 /* 0 */) digits = digits.replace(/^0+(?=\d)/, '');
        if (contentLength !== -1) {
          // Identical duplicates are harmless; different ones are how requests get smuggled.
          if (digits !== contentLengthText) return this.fail(parserErrors.conflictingContentLength());
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
      } else if (name === 'host' && ++hosts > 1) return this.fail(parserErrors.host('More than one Host header'));
      const previous = headers[name];
      headers[name] = previous === undefined ? value : `${previous}, ${value}`;
    }
    if (httpVersion === 11 && hosts === 0) return this.fail(parserErrors.host('Missing Host header (required by HTTP/1.1)'));

    // Body framing (RFC 9112 §6.3).
    let bodyLength: number;
    if (transferEncoding !== null) {
      if (contentLength !== -1) return this.fail(parserErrors.lengthAndEncoding());
      if (httpVersion === 10) return this.fail(parserErrors.lengthRequired('Transfer-Encoding cannot frame an HTTP/1.0 request; send Content-Length'));
      const codingError = checkTransferEncoding(transferEncoding);
      if (codingError !== null) return this.fail(codingError);
      bodyLength = -1;
    } else if (contentLength !== -1) {
      bodyLength = contentLength;
    } else {
      if (expectContinue) return this.fail(parserErrors.lengthRequired('Expect: 100-continue needs Content-Length or Transfer-Encoding'));
      bodyLength = 0;
    }
    const keepAlive = httpVersion === 11
      ? (connection & CONNECTION_CLOSE) === 0
      : (connection & CONNECTION_KEEP_ALIVE) !== 0 && (connection & CONNECTION_CLOSE) === 0;

    const head = new ParsedRequestHead(method, target, path, query, httpVersion, headers, keepAlive, expectContinue,
      bodyLength === Number.POSITIVE_INFINITY ? Number.MAX_SAFE_INTEGER : bodyLength);
    this.head = head;
    this.headBytes = headBytes;
    const streamed = this.events.onHead(head) === true;
    if (this.state === DEAD) return;

    if (bodyLength === 0) {
      if (streamed) {
        this.events.onBodyStart(head);
        if (this.state === DEAD) return;
      }
      this.complete(EMPTY_BODY);
      return;
    }
    let limit = typeof this.bodyBytesMax === 'number' ? this.bodyBytesMax : this.bodyBytesMax(head);
    // A limit function returning garbage (NaN, negative) must not lift the limit.
    if (!(limit >= 0)) limit = 0;
    this.bodyLimit = limit;
    this.bodyBytes = 0;
    if (bodyLength > 0) {
      if (bodyLength > limit) return this.fail(parserErrors.bodyTooLarge(limit));
      this.remaining = bodyLength;
      this.state = BODY_LENGTH;
    } else {
      this.state = CHUNK_SIZE;
    }
    if (streamed) {
      this.streaming = true;
      this.bodyCredit = 0;
      this.events.onBodyStart(head);
    } else if (expectContinue) {
      this.events.onContinue(head);
    }
  }

  private complete(body: Buffer): void {
    const head = this.head!;
    this.head = null;
    this.state = HEAD;
    this.begun = false;
    this.streaming = false;
    this.parts.length = 0;
    this.events.onRequest(head, body);
  }

  // ── Content-Length body ───────────────────────────────────────────────

  private readBodyLength(chunk: Buffer, off: number): number {
    if (this.streaming) return this.handOnBody(chunk, off);
    const available = chunk.length - off;
    if (this.parts.length === 0 && this.whole === null && available >= this.remaining) {
      const end = off + this.remaining;
      this.complete(chunk.subarray(off, end));
      return end;
    }
    const n = available < this.remaining ? available : this.remaining;
    if (this.whole === null && this.bodyBytes === 0 && this.remaining >= WHOLE_BODY_BYTES_MIN) this.whole = Buffer.allocUnsafe(this.remaining);
    if (this.whole !== null) chunk.copy(this.whole, this.bodyBytes, off, off + n);
    else this.parts.push(chunk.subarray(off, off + n));
    this.bodyBytes += n;
    this.remaining -= n;
    if (this.remaining === 0) {
      const whole = this.whole;
      this.whole = null;
      this.complete(whole ?? Buffer.concat(this.parts, this.bodyBytes));
    }
    return off + n;
  }

  /**
   * Streamed body (Content-Length or chunk data): hand on what the credit
   * allows, then pause. Counters and state are settled before the event,
   * since the listener may destroy the parser from inside it.
   */
  private handOnBody(chunk: Buffer, off: number): number {
    let n = chunk.length - off;
    if (n > this.remaining) n = this.remaining;
    if (n > this.bodyCredit) n = this.bodyCredit;
    if (n === 0) {
      this.paused = true;
      return off;
    }
    this.bodyCredit -= n;
    this.bodyBytes += n;
    this.remaining -= n;
    const done = this.remaining === 0;
    if (done && this.state === CHUNK_DATA) {
      this.state = CHUNK_DATA_END;
      this.sawChunkCr = false;
    }
    this.events.onBodyData(chunk.subarray(off, off + n));
    if (this.state === DEAD) return chunk.length;
    if (done && this.state === BODY_LENGTH) this.complete(EMPTY_BODY);
    return off + n;
  }

  // ── Chunked body ──────────────────────────────────────────────────────

  private readChunkSize(chunk: Buffer, off: number): number {
    const next = this.readLine(chunk, off, CHUNK_LINE_BYTES_MAX, false);
    if (next < 0) return chunk.length;
    const buf = this.lineBuf;
    const end = this.lineEnd;
    let i = this.lineStart;
    let size = 0;
    let digits = 0;
    let sawDigit = false;
    for (; i < end; i++) {
      const d = hexValue(buf[i]!);
      if (d < 0) break;
      sawDigit = true;
      if (digits === 0 && d === 0) continue;
      if (++digits <= CHUNK_SIZE_DIGITS_MAX) size = size * 16 + d;
    }
    if (!sawDigit) {
      this.fail(parserErrors.chunk('chunk size is not hexadecimal'));
      return chunk.length;
    }
    // Only BWS ";" extensions may follow the size; they are ignored but must hold no control characters.
    let j = i;
    while (j < end && (buf[j] === SP || buf[j] === HTAB)) j++;
    if (j < end && buf[j] !== 59 /* ; */) {
      this.fail(parserErrors.chunk('unexpected bytes after the chunk size'));
      return chunk.length;
    }
    for (; j < end; j++) {
      const b = buf[j]!;
      if ((b < 32 && b !== HTAB) || b === 127) {
        this.fail(parserErrors.chunk('control character in chunk extension'));
        return chunk.length;
      }
    }
    if (size === 0 && digits === 0) {
      this.state = TRAILERS;
      this.trailerBytes = 0;
      return next;
    }
    if (digits > CHUNK_SIZE_DIGITS_MAX || this.bodyBytes + size > this.bodyLimit) {
      this.fail(parserErrors.bodyTooLarge(this.bodyLimit));
      return chunk.length;
    }
    this.remaining = size;
    this.state = CHUNK_DATA;
    return next;
  }

  private readChunkData(chunk: Buffer, off: number): number {
    if (this.streaming) return this.handOnBody(chunk, off);
    const available = chunk.length - off;
    const n = available < this.remaining ? available : this.remaining;
    this.parts.push(chunk.subarray(off, off + n));
    this.bodyBytes += n;
    this.remaining -= n;
    if (this.remaining === 0) {
      this.state = CHUNK_DATA_END;
      this.sawChunkCr = false;
    }
    return off + n;
  }

  private readChunkDataEnd(chunk: Buffer, off: number): number {
    if (!this.sawChunkCr) {
      if (chunk[off] !== CR) {
        this.fail(parserErrors.chunk('chunk data must be followed by CRLF'));
        return chunk.length;
      }
      this.sawChunkCr = true;
      off++;
      if (off === chunk.length) return off;
    }
    if (chunk[off] !== LF) {
      this.fail(parserErrors.chunk('chunk data must be followed by CRLF'));
      return chunk.length;
    }
    this.state = CHUNK_SIZE;
    return off + 1;
  }

  private readTrailer(chunk: Buffer, off: number): number {
    // Trailer fields count toward the header limit; the final empty line is free.
    const allowance = this.headerBytesMax - this.headBytes - this.trailerBytes;
    const next = this.readLine(chunk, off, allowance > 0 ? allowance + 2 : 2, true);
    if (next < 0) return chunk.length;
    const lineBytes = this.lineEnd - this.lineStart;
    if (lineBytes === 0) {
      const body = this.streaming ? EMPTY_BODY
        : this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.bodyBytes);
      this.complete(body);
      return next;
    }
    this.trailerBytes += lineBytes + 2;
    if (this.headBytes + this.trailerBytes > this.headerBytesMax) {
      this.fail(parserErrors.headersTooLarge(this.headerBytesMax));
      return chunk.length;
    }
    const line = this.lineBuf.toString('latin1', this.lineStart, this.lineEnd);
    const why = trailerLineError(line);
    if (why !== null) {
      this.fail(parserErrors.trailer(why));
      return chunk.length;
    }
    return next;
  }

  /**
   * Read one CRLF-terminated line of at most `max` bytes (CRLF included).
   * Returns the offset after its LF with the line in lineBuf[lineStart,
   * lineEnd), or -1 when the line is incomplete (kept in lineAcc) or failed.
   */
  private readLine(chunk: Buffer, off: number, max: number, isTrailer: boolean): number {
    const lf = chunk.indexOf(LF, off);
    const n = (lf === -1 ? chunk.length : lf + 1) - off;
    if (this.lineAccLen + n > max) {
      this.fail(isTrailer ? parserErrors.headersTooLarge(this.headerBytesMax) : parserErrors.chunk('chunk size line too long'));
      return -1;
    }
    if (lf !== -1 && this.lineAccLen === 0) {
      if (lf === off || chunk[lf - 1] !== CR) {
        this.fail(parserErrors.lineEnding());
        return -1;
      }
      this.lineBuf = chunk;
      this.lineStart = off;
      this.lineEnd = lf - 1;
      return lf + 1;
    }
    const needed = this.lineAccLen + n;
    let acc = this.lineAcc;
    if (acc === null || acc.length < needed) {
      const grown = Buffer.allocUnsafe(Math.max(64, needed, (acc?.length ?? 0) * 2));
      if (acc !== null) acc.copy(grown, 0, 0, this.lineAccLen);
      acc = this.lineAcc = grown;
    }
    chunk.copy(acc, this.lineAccLen, off, off + n);
    this.lineAccLen = needed;
    if (lf === -1) return -1;
    this.lineAccLen = 0;
    if (needed < 2 || acc[needed - 2] !== CR) {
      this.fail(parserErrors.lineEnding());
      return -1;
    }
    this.lineBuf = acc;
    this.lineStart = 0;
    this.lineEnd = needed - 2;
    return lf + 1;
  }
}

function hexValue(b: number): number {
  if (b >= 48 && b <= 57) return b - 48;
  if (b >= 97 && b <= 102) return b - 87;
  if (b >= 65 && b <= 70) return b - 55;
  return -1;
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

const INVALID_FIELD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;

/** Why a trailer line is not a valid field line, or null. */
function trailerLineError(line: string): string | null {
  const c0 = line.charCodeAt(0);
  if (c0 === SP || c0 === HTAB) return 'line folding (obs-fold) is not allowed';
  const colon = line.indexOf(':');
  if (colon <= 0) return 'missing colon or name';
  if (!TOKEN.test(line.slice(0, colon))) return 'name is not a token';
  if (INVALID_FIELD_VALUE.test(line.slice(colon + 1))) return 'control character in value';
  return null;
}
