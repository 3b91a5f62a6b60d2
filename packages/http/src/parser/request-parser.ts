/**
 * Push parser for HTTP/1.1 requests (RFC 9112), fed the socket's Buffers.
 *
 * Why hand-written: Node's `http` (llhttp) rejects the methods Tessera speaks
 * (UPDATE, INFO, SEARCH…). The parser finds the end of the head with one
 * native `indexOf("\r\n\r\n")`, parses the head from a single latin1 string,
 * and hands bodies on as slices of the socket's Buffers: no per-byte work in
 * JavaScript on the common path and no allocation per byte anywhere.
 *
 * Framing is strict so that no request can be smuggled past it (the head's
 * text is parsed in request-head.ts, chunk-size and trailer lines in
 * chunked.ts). Every limit is checked as bytes arrive, before memory is spent
 * on them. After an error the parser is dead: it ignores further input, and
 * the caller answers and closes the connection.
 *
 * Streamed bodies: when `onHead` returns true, the body is not gathered but
 * handed on piece by piece (`onBodyData`), each piece a slice of a socket
 * Buffer, within a byte credit the listener grants (`grantBodyBytes`). With
 * the credit spent the parser pauses itself, holding the unparsed input, so
 * a listener that stops granting stops the reading of the body.
 */
import type { TesseraError } from '@tessera/errors';
import { BodyPieces } from '../body-pieces.js';
import type { RequestHead } from '../server/types.js';
import { CR, LF, SP } from './ascii.js';
import {
  CHUNK_LINE_BYTES_MAX, CHUNK_SIZE_TOO_LARGE, chunkSizeError, LINE_INCOMPLETE, LINE_TOO_LONG, LineReader, parseChunkSize,
  trailerLineError,
} from './chunked.js';
import { parserErrors } from './errors.js';
import { CONTENT_LENGTH_BEYOND_ANY, ParsedRequestHead, parseRequestHead } from './request-head.js';

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
  /**
   * `n` more bytes of a body the parser gathers (not a streamed one) are about to be held: an error refuses them
   * (the parser fails with it, as with a limit), null lets them in.
   */
  onBodyBytes(n: number): TesseraError | null;
  /**
   * A complete request. `body` may be a slice of a socket Buffer (empty for a streamed body); a body of
   * PIECES_BODY_BYTES_MIN or more comes as the pieces it arrived in (BodyPieces), never joined here.
   */
  onRequest(head: ParsedRequestHead, body: Buffer | Buffer[]): void;
  /** A protocol error; the parser is dead afterwards. `head` is set when the error came after the head. */
  onError(error: TesseraError, head: ParsedRequestHead | null): void;
}

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

/**
 * Bodies from this size on are handed on as the pieces they arrived in
 * (HttpRequest.bodyParts): a stored-content body goes to its volume file
 * that way, with no buffer of its size, which at 1 MiB and more was a fresh
 * `mmap` faulted in page by page under the servers' malloc settings.
 */
export const PIECES_BODY_BYTES_MIN = 1024 * 1024;

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
  /** Body pieces of the current request when it spans chunks or is chunked (short pieces coalesced). */
  private readonly pieces = new BodyPieces();
  private bodyBytes = 0;
  /** CHUNK_DATA_END: whether the CR after the chunk data has been seen. */
  private sawChunkCr = false;
  private trailerBytes = 0;
  /** The current body is handed on through onBodyData instead of gathered in `parts`. */
  private streaming = false;
  /** Streamed body bytes the listener will still take before the parser pauses itself. */
  private bodyCredit = 0;

  /** Chunk-size and trailer lines. */
  private readonly lines = new LineReader();


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
    this.pieces.clear();
    this.headAcc = null;
    this.lines.release();
  }

  /** Whether the listener refuses to let `n` more gathered body bytes in (the parser has then failed). */
  private refused(n: number): boolean {
    const error = this.events.onBodyBytes(n);
    if (error === null) return false;
    this.fail(error);
    return true;
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
    const head = parseRequestHead(s, p, this.urlBytesMax);
    if (!(head instanceof ParsedRequestHead)) return this.fail(head);
    this.head = head;
    this.headBytes = bytes + this.skippedBytes;
    this.skippedBytes = 0;
    // CONTENT_LENGTH_BEYOND_ANY stands for a Content-Length too long to be exact: beyond any limit.
    const bodyLength = head.contentLength === CONTENT_LENGTH_BEYOND_ANY ? Number.POSITIVE_INFINITY : head.contentLength;
    const expectContinue = head.expectContinue;
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

  private complete(body: Buffer | Buffer[]): void {
    const head = this.head!;
    this.head = null;
    this.state = HEAD;
    this.begun = false;
    this.streaming = false;
    this.pieces.clear();
    this.events.onRequest(head, body);
  }

  /** The gathered body: its pieces when large, else one Buffer. */
  private gathered(): Buffer | Buffer[] {
    return this.pieces.bytes >= PIECES_BODY_BYTES_MIN ? this.pieces.takeAll() : this.pieces.join();
  }

  // ── Content-Length body ───────────────────────────────────────────────

  private readBodyLength(chunk: Buffer, off: number): number {
    if (this.streaming) return this.handOnBody(chunk, off);
    const available = chunk.length - off;
    if (this.pieces.bytes === 0 && available >= this.remaining) {
      if (this.refused(this.remaining)) return chunk.length;
      const end = off + this.remaining;
      this.complete(chunk.subarray(off, end));
      return end;
    }
    const n = available < this.remaining ? available : this.remaining;
    if (this.refused(n)) return chunk.length;
    this.pieces.push(chunk.subarray(off, off + n));
    this.bodyBytes += n;
    this.remaining -= n;
    if (this.remaining === 0) this.complete(this.gathered());
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
    const lines = this.lines;
    const size = parseChunkSize(lines.buf, lines.start, lines.end);
    if (size < 0 && size !== CHUNK_SIZE_TOO_LARGE) {
      this.fail(parserErrors.chunk(chunkSizeError(size)));
      return chunk.length;
    }
    if (size === 0) {
      this.state = TRAILERS;
      this.trailerBytes = 0;
      return next;
    }
    if (size === CHUNK_SIZE_TOO_LARGE || this.bodyBytes + size > this.bodyLimit) {
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
    if (this.refused(n)) return chunk.length;
    this.pieces.push(chunk.subarray(off, off + n));
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
    const lines = this.lines;
    const lineBytes = lines.end - lines.start;
    if (lineBytes === 0) {
      this.complete(this.streaming ? EMPTY_BODY : this.gathered());
      return next;
    }
    this.trailerBytes += lineBytes + 2;
    if (this.headBytes + this.trailerBytes > this.headerBytesMax) {
      this.fail(parserErrors.headersTooLarge(this.headerBytesMax));
      return chunk.length;
    }
    const line = lines.buf.toString('latin1', lines.start, lines.end);
    const why = trailerLineError(line);
    if (why !== null) {
      this.fail(parserErrors.trailer(why));
      return chunk.length;
    }
    return next;
  }

  /**
   * Read one CRLF-terminated line of at most `max` bytes (CRLF included) into
   * `lines`. Returns the offset after its LF, or -1 when the line is
   * incomplete (kept for the next chunk) or failed.
   */
  private readLine(chunk: Buffer, off: number, max: number, isTrailer: boolean): number {
    const next = this.lines.read(chunk, off, max);
    if (next >= 0 || next === LINE_INCOMPLETE) return next;
    this.fail(next !== LINE_TOO_LONG ? parserErrors.lineEnding()
      : isTrailer ? parserErrors.headersTooLarge(this.headerBytesMax) : parserErrors.chunk('chunk size line too long'));
    return -1;
  }
}
