/**
 * One client connection: feeds the socket to a RequestParser, queues parsed
 * requests (pipelining, bounded by pipelineDepthMax), runs the handler for
 * one request at a time so that pipelined writes and reads of the same
 * document keep their order, and writes the responses in order, each with a
 * single socket write.
 *
 * Reading pauses while the queue is full or the socket's write buffer is
 * (backpressure both ways). Deadlines are plain numbers checked by the
 * server's one coarse clock tick; no timer is armed per request.
 *
 * Streamed bodies (`streamBody`): the request is queued as soon as its head
 * is accepted, with `bodyStream`, and handled in its turn; nothing after it
 * is parsed until its body is complete. Reading pauses while
 * STREAM_BUFFER_BYTES_MAX bytes wait for the handler. Errors of the body
 * (limit, timeout, framing, client gone) reach the handler through the
 * stream instead of a response of the server's own; its answer then closes
 * the connection. A handler answering before the body is complete: the rest
 * is read and dropped if at most STREAM_DRAIN_BYTES_MAX bytes remain (a
 * chunked body: dropped until it ends, closing once that many bytes were
 * dropped), else the response carries `Connection: close`. `Expect:
 * 100-continue` is answered when the handler first pulls; a handler
 * answering without pulling closes the connection, as the client may still
 * be waiting to send the body.
 *
 * Streamed responses (`bodyStream`): the head goes out with
 * `Transfer-Encoding: chunked` and the handler's request stays current while
 * its chunks are written, each pulled only once the socket has drained; the
 * requests behind it wait. A producer that fails, or a client that goes away,
 * ends the connection without the last chunk.
 */
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { errorBody, toTesseraError, type TesseraError } from '@tessera/errors';
import type { ParsedRequestHead } from '../parser/request-head.js';
import { RequestParser, type RequestParserEvents, type RequestParserOptions } from '../parser/request-parser.js';
import { RequestBodyStream, STREAM_BUFFER_BYTES_MAX, STREAM_RESUME_BYTES, type BodyStreamOwner } from './body-stream.js';
import { resolveMethod } from './method.js';
import { serverErrors } from './errors.js';

/** The release hook of a pooled response chunk (a Symbol.for key: the engine's pool and this server share no module). */
const RELEASE_BUFFER = Symbol.for('tessera.release');
import { serializeHeaders, type ResponseHead } from './response-head.js';
import type { HttpRequest, HttpResponse, HttpServerOptions, RequestHandler, RequestHead } from './types.js';

/** What a connection needs from its server. */
export interface ConnectionHost {
  readonly options: HttpServerOptions;
  readonly parserOptions: RequestParserOptions;
  readonly handler: RequestHandler;
  readonly responseHead: ResponseHead;
  connectionClosed(connection: Connection): void;
}

/** The request object handed to the handler. */
export class IncomingRequest implements HttpRequest {
  readonly method: string;
  readonly originalMethod: string;
  readonly target: string;
  readonly path: string;
  readonly query: string;
  readonly httpVersion: 10 | 11;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
  readonly bodyStream: RequestBodyStream | undefined;
  readonly remoteAddress: string;
  readonly startedAt: bigint;
  /** False when the connection closes after this response (`Connection: close`, HTTP/1.0). */
  readonly keepAlive: boolean;

  constructor(head: ParsedRequestHead, body: Buffer, remoteAddress: string, startedAt: bigint,
    bodyStream: RequestBodyStream | undefined) {
    this.method = head.method;
    this.originalMethod = head.originalMethod;
    this.target = head.target;
    this.path = head.path;
    this.query = head.query;
    this.httpVersion = head.httpVersion;
    this.headers = head.headers;
    this.body = body;
    this.bodyStream = bodyStream;
    this.remoteAddress = remoteAddress;
    this.startedAt = startedAt;
    this.keepAlive = head.keepAlive;
  }
}

/** A request answered by the server itself with an error, in its place in the queue. */
class ProtocolFailure {
  constructor(
    readonly error: TesseraError,
    /** What onResponse reports: the request (method errors), the head (limit errors after the head) or null. */
    readonly subject: HttpRequest | RequestHead | null,
    /** Framing can no longer be trusted: answer, then close. */
    readonly fatal: boolean,
    readonly startedAt: bigint,
  ) {}
}

/** `HEAD` responses carry Content-Length but no body; decided by the method on the request line (case-sensitive: `head` is no HEAD). */
function isHeadMethod(originalMethod: string): boolean {
  return originalMethod === 'HEAD';
}

// Deadline kinds.
const NONE = 0;
const HEADERS = 1;
const BODY = 2;
const IDLE = 3;
const LINGER = 4;

/**
 * Parsing ahead stops once the bodies of queued (not yet running) requests
 * reach this many bytes, whatever pipelineDepthMax allows: 64 pipelined
 * 64 MiB uploads must not sit in memory at once.
 */
export const PIPELINE_BODY_BYTES_MAX = 4 * 1024 * 1024;

/**
 * After answering with `Connection: close`, input is still read (and
 * dropped) this long so the client sees the response rather than a reset.
 */
export const LINGER_MS = 2_000;

/**
 * A handler answered a streamed request early: up to this many unread body
 * bytes are read and dropped to keep the connection (and the requests
 * pipelined behind) alive. More than this with Content-Length → the response
 * carries `Connection: close`; a chunked body still going after this many
 * dropped bytes → the connection closes. Reading 1 MiB costs less than a new
 * connection; reading the rest of a 4 GiB upload nobody wants does not.
 */
export const STREAM_DRAIN_BYTES_MAX = 1024 * 1024;

const EMPTY_BODY = Buffer.alloc(0);

const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';
const ERROR_CONTENT_TYPE = 'Content-Type: application/json; charset=utf-8\r\n';
const NON_ASCII = /[^\x00-\x7f]/;

/** Socket errors that are ordinary client behaviour, not worth reporting. */
const ROUTINE_SOCKET_ERRORS = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ETIMEDOUT', 'ERR_STREAM_DESTROYED']);

/** End an iterator early (its `finally` blocks run), if it supports that. */
async function closeIterator(iterator: AsyncIterator<unknown>): Promise<void> {
  if (typeof iterator.return === 'function') await iterator.return();
}

function uncorkConnection(connection: Connection): void {
  connection.uncork();
}

export class Connection implements RequestParserEvents, BodyStreamOwner {
  /** ms timestamp when the current deadline passes; 0 = none. */
  private deadline = 0;
  private deadlineKind = NONE;
  /** ms timestamp by which a full write buffer must have drained; 0 = none. */
  private drainDeadline = 0;
  /** A headers deadline due before the next clock tick, timed exactly (see checkDeadlines). */
  private exactTimer: NodeJS.Timeout | null = null;

  private readonly host: ConnectionHost;
  private readonly options: HttpServerOptions;
  private readonly socket: Socket;
  private readonly parser: RequestParser;
  private readonly remoteAddress: string;
  /** Parsed requests not yet answered (bounded by pipelineDepthMax, plus one failure). */
  private readonly queue: (IncomingRequest | ProtocolFailure)[] = [];
  /** Body bytes of the requests in the queue. */
  private queuedBodyBytes = 0;
  /** The request whose handler is running. */
  private current: IncomingRequest | null = null;
  /** The streamed request whose body is being received (queued or running or answered). */
  private receiving: IncomingRequest | null = null;
  /** The handler of `receiving` answered: its body is read and dropped. */
  private discardingBody = false;
  /** Body bytes still allowed to be dropped while discarding. */
  private discardBytesLeft = 0;

  private startedAt = 0n;
  private methodError: TesseraError | null = null;
  /** A `100 Continue` to send once the responses before it are written. */
  private continueOwed = false;
  /** No further request will be parsed on this connection (the parser is destroyed). */
  private stopReading = false;
  /**
   * The server is closing: answer what has been received, the last response
   * with `Connection: close`, then close (see caughtUp()).
   */
  private draining = false;
  private readPaused = false;
  private writeBlocked = false;
  private peerEnded = false;
  /** end() or destroy() was called on the socket. */
  private ended = false;
  private inParser = false;
  /** The socket is corked (until the parser returns, or else the next tick). */
  private corked = false;
  /** Responses written while the parser runs (synchronous handlers): uncork once it returns. */
  private uncorkAfterParser = false;
  /** A streamed response waits for the write buffer to drain (or the socket to close). */
  private drainWaiter: (() => void) | null = null;

  constructor(host: ConnectionHost, socket: Socket) {
    this.host = host;
    this.options = host.options;
    this.socket = socket;
    this.remoteAddress = socket.remoteAddress ?? '';
    this.parser = new RequestParser(host.parserOptions, this);
    socket.on('data', this.onData);
    socket.on('drain', this.onDrain);
    socket.on('end', this.onEnd);
    socket.on('error', this.onSocketError);
    socket.on('close', this.onClose);
    this.setDeadline(IDLE, this.options.idleTimeoutMs);
  }

  // ── Socket events (bound once per connection) ─────────────────────────

  private readonly onData = (chunk: Buffer): void => {
    if (this.deadlineKind === BODY) this.deadline = Date.now() + this.options.bodyTimeoutMs;
    if (!this.runParser(this.parser.push, chunk)) return;
    this.resumeReading();
  };

  private readonly onDrain = (): void => {
    this.writeBlocked = false;
    this.drainDeadline = 0;
    this.wakeStream();
    this.drive();
  };

  private readonly onEnd = (): void => {
    this.peerEnded = true;
    this.checkTruncatedBody();
    if (this.current === null && this.queue.length === 0) this.afterQueueDrained();
  };

  private readonly onSocketError = (err: Error): void => {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === undefined || !ROUTINE_SOCKET_ERRORS.has(code)) this.report(err);
    // The socket is destroyed by Node after 'error'; 'close' follows.
  };

  private readonly onClose = (): void => {
    this.ended = true;
    this.stopReading = true;
    this.parser.destroy();
    const receiving = this.receiving;
    if (receiving !== null) {
      this.receiving = null;
      receiving.bodyStream!.fail(serverErrors.bodyAborted());
    }
    this.queue.length = 0;
    this.queuedBodyBytes = 0;
    this.deadline = 0;
    this.drainDeadline = 0;
    if (this.exactTimer !== null) clearTimeout(this.exactTimer);
    this.exactTimer = null;
    this.wakeStream();
    this.host.connectionClosed(this);
  };

  // ── Parser events ─────────────────────────────────────────────────────

  onMessageBegin(): void {
    this.startedAt = process.hrtime.bigint();
    this.setDeadline(HEADERS, this.options.headersTimeoutMs);
  }

  onHead(head: ParsedRequestHead): boolean {
    try {
      const resolved = resolveMethod(head.originalMethod, head.path, head.headers);
      head.method = resolved.method;
      head.path = resolved.path;
    } catch (err) {
      this.methodError = toTesseraError(err);
    }
    if (head.contentLength !== 0) this.setDeadline(BODY, this.options.bodyTimeoutMs);
    const streamBody = this.options.streamBody;
    if (streamBody === undefined || this.methodError !== null) return false;
    try {
      return streamBody(head) === true;
    } catch (err) {
      // Neither buffering (the body may be GiBs) nor streaming is safe: answer 500 and close.
      this.report(err);
      this.parser.destroy();
      this.onError(toTesseraError(err), head);
      return false;
    }
  }

  onBodyStart(head: ParsedRequestHead): void {
    const stream = new RequestBodyStream(this, head.expectContinue && head.contentLength !== 0);
    const request = new IncomingRequest(head, EMPTY_BODY, this.remoteAddress, this.startedAt, stream);
    this.receiving = request;
    this.discardingBody = false;
    this.parser.grantBodyBytes(STREAM_BUFFER_BYTES_MAX);
    this.queue.push(request);
    this.drive();
  }

  onBodyData(data: Buffer): void {
    if (this.discardingBody) {
      this.discardBytesLeft -= data.length;
      if (this.discardBytesLeft < 0) {
        // A chunked body nobody reads goes on and on: the response is sent, close.
        this.receiving = null;
        this.discardingBody = false;
        this.endSocket();
      }
      return;
    }
    const stream = this.receiving!.bodyStream!;
    stream.push(data);
    // The credit never exceeds what the buffer can still take (granted as the bound minus the buffered bytes).
    assert(stream.bufferedBytes <= STREAM_BUFFER_BYTES_MAX, 'streamed body buffer over its bound');
    // Credit spent → stop reading the socket until the handler pulls.
    if (this.parser.streamCredit === 0) this.pauseReading();
  }

  bodyPulled(stream: RequestBodyStream): void {
    if (stream.continueOwed) {
      stream.continueOwed = false;
      this.writeRaw(CONTINUE);
    }
    const receiving = this.receiving;
    if (receiving === null || receiving.bodyStream !== stream || this.discardingBody) return;
    const buffered = stream.bufferedBytes;
    if (buffered > STREAM_RESUME_BYTES || this.parser.streamCredit >= STREAM_BUFFER_BYTES_MAX - buffered) return;
    this.parser.grantBodyBytes(STREAM_BUFFER_BYTES_MAX - buffered);
    this.resumeReading();
  }

  onContinue(): void {
    if (this.current === null && this.queue.length === 0) this.writeRaw(CONTINUE);
    else this.continueOwed = true;
  }

  onRequest(head: ParsedRequestHead, body: Buffer): void {
    const receiving = this.receiving;
    if (receiving !== null) {
      // The end of a streamed body; its request is already queued, running or answered.
      this.receiving = null;
      this.discardingBody = false;
      receiving.bodyStream!.end();
    } else {
      const request = new IncomingRequest(head, body, this.remoteAddress, this.startedAt, undefined);
      this.queuedBodyBytes += body.length;
      if (this.methodError !== null) {
        this.queue.push(new ProtocolFailure(this.methodError, request, false, this.startedAt));
        this.methodError = null;
      } else {
        this.queue.push(request);
      }
    }
    this.setDeadline(NONE, 0);
    if (!head.keepAlive) {
      // Nothing after this request will be answered.
      this.stopParsing();
    } else if (!this.queueHasRoom()) {
      this.parser.pause();
      this.pauseReading();
    }
    this.drive();
  }

  onError(error: TesseraError, head: ParsedRequestHead | null): void {
    this.methodError = null;
    this.stopReading = true;
    this.setDeadline(NONE, 0);
    // Keep reading (and dropping) input: a client still sending its body must be able to read our answer.
    this.resumeSocket();
    const receiving = this.receiving;
    if (receiving !== null) {
      this.receiving = null;
      if (this.discardingBody) {
        // Already answered: nothing is owed; close once the response is out.
        this.discardingBody = false;
        this.drive();
      } else {
        // The handler (running or still queued) learns from the stream and answers; then the connection closes.
        receiving.bodyStream!.fail(error);
      }
      return;
    }
    this.queue.push(new ProtocolFailure(error, head, true, this.startedAt === 0n ? process.hrtime.bigint() : this.startedAt));
    this.drive();
  }

  // ── Request processing ────────────────────────────────────────────────

  /** Answer queued requests in order while nothing is running and the socket accepts writes. */
  private drive(): void {
    // Draining: answer once the parser has consumed what it was given, so the last answer knows it is the last.
    if (this.draining && this.inParser) return;
    while (this.current === null && !this.writeBlocked && !this.ended && this.queue.length > 0) {
      const item = this.queue.shift()!;
      if (item instanceof ProtocolFailure) {
        if (item.subject instanceof IncomingRequest) this.queuedBodyBytes -= item.subject.body.length;
        this.writeError(item.error, item.subject, item.fatal, item.startedAt);
        continue;
      }
      this.queuedBodyBytes -= item.body.length;
      this.current = item;
      let result: Promise<HttpResponse> | HttpResponse;
      try {
        result = this.host.handler(item);
      } catch (err) {
        this.current = null;
        this.handlerFailed(item, err);
        continue;
      }
      if (result !== null && typeof result === 'object' && typeof (result as Promise<HttpResponse>).then === 'function') {
        (result as Promise<HttpResponse>).then(this.onHandlerResolved, this.onHandlerRejected);
        return;
      }
      this.current = null;
      this.respond(item, result as HttpResponse);
    }
    if (this.current === null && this.queue.length === 0) this.afterQueueDrained();
    this.resumeReading();
  }

  private readonly onHandlerResolved = (response: HttpResponse): void => {
    const request = this.current;
    if (request === null) return;
    this.current = null;
    if (!this.ended) this.respond(request, response);
    this.drive();
  };

  private readonly onHandlerRejected = (err: unknown): void => {
    const request = this.current;
    if (request === null) return;
    this.current = null;
    if (!this.ended) this.handlerFailed(request, err);
    this.drive();
  };

  private handlerFailed(request: IncomingRequest, err: unknown): void {
    const stream = request.bodyStream;
    // The stream's own failure (limit, timeout, client gone) is the client's doing, not a server fault.
    if (stream === undefined || err !== stream.error) this.report(err);
    const mustClose = stream !== undefined && this.abandonBody(request);
    this.writeError(toTesseraError(err), request, mustClose, request.startedAt);
  }

  /** Nothing is queued or running: close if asked to, else owe a 100 Continue or wait idle. */
  private afterQueueDrained(): void {
    if (this.ended) return;
    // The client has closed its side and everything it sent is parsed: what is left can never complete.
    if (this.peerEnded && !this.inParser && !this.parser.isPaused) this.stopParsing();
    if (this.stopReading || (this.draining && this.caughtUp())) {
      this.endSocket();
      return;
    }
    if (this.continueOwed) {
      this.continueOwed = false;
      this.writeRaw(CONTINUE);
    }
    if (this.parser.idle) this.setDeadline(IDLE, this.options.idleTimeoutMs);
  }

  private respond(request: IncomingRequest, response: HttpResponse): void {
    if (response === null || typeof response !== 'object') {
      return this.handlerFailed(request, serverErrors.invalidResponse('not an object'));
    }
    const status = response.status;
    if (!Number.isInteger(status) || status < 200 || status > 599) {
      return this.handlerFailed(request, serverErrors.invalidResponse(`status ${String(status)}`));
    }
    const body = response.body;
    if (body !== undefined && body !== null && typeof body !== 'string' && !(body instanceof Uint8Array)) {
      return this.handlerFailed(request, serverErrors.invalidResponse('body must be a Buffer, a string or null'));
    }
    const stream = response.bodyStream;
    if (stream !== undefined && stream !== null) {
      if (typeof (stream as Partial<AsyncIterable<Uint8Array>>)[Symbol.asyncIterator] !== 'function') {
        return this.handlerFailed(request, serverErrors.invalidResponse('bodyStream must be an async iterable'));
      }
      if (body !== undefined && body !== null) return this.handlerFailed(request, serverErrors.invalidResponse('body and bodyStream are exclusive'));
      const length = response.bodyLength;
      if (length !== undefined && (!Number.isSafeInteger(length) || length < 0)) {
        return this.handlerFailed(request, serverErrors.invalidResponse('bodyLength must be a non-negative integer'));
      }
    }
    let extra = '';
    if (response.headers !== undefined && response.headers !== null) {
      const serialized = serializeHeaders(response.headers);
      if (serialized === null) return this.handlerFailed(request, serverErrors.invalidResponse('invalid header name or value'));
      extra = serialized;
    }
    const mustClose = request.bodyStream !== undefined && this.abandonBody(request);
    if (stream !== undefined && stream !== null) {
      this.writeStreamed(request, status, extra, stream, mustClose || !request.keepAlive, response.bodyLength);
      return;
    }
    this.write(status, extra, body ?? null, isHeadMethod(request.originalMethod), request.httpVersion,
      mustClose || !request.keepAlive);
    this.reportResponse(request, status, request.startedAt);
  }

  /**
   * Send a streamed response: the head now, then `pump` writes the chunks;
   * the request stays current (nothing behind it runs) until the last one.
   * HTTP/1.0 has no chunked coding: the body ends with the connection.
   * With a known `length`, Content-Length frames the body instead.
   */
  private writeStreamed(request: IncomingRequest, status: number, extra: string, stream: AsyncIterable<Uint8Array>,
    mustClose: boolean, length: number | undefined): void {
    const noBody = isHeadMethod(request.originalMethod) || status === 204 || status === 304;
    const chunked = request.httpVersion === 11 && length === undefined;
    const close = mustClose || (!chunked && !noBody && length === undefined)
      || (this.queue.length === 0 && (this.stopReading || (this.draining && this.caughtUp())));
    const responseHead = this.host.responseHead;
    let head = responseHead.statusLine(status) + responseHead.dateLine + extra;
    if (chunked && status !== 204 && status !== 304) head += 'Transfer-Encoding: chunked\r\n';
    if (length !== undefined && status !== 204 && status !== 304) head += `Content-Length: ${length}\r\n`;
    if (close) head += 'Connection: close\r\n\r\n';
    else if (request.httpVersion === 10) head += 'Connection: keep-alive\r\n\r\n';
    else head += '\r\n';
    const flushed = this.socket.write(head, 'latin1');
    if (noBody) {
      // Nothing will read the body: let its producer release what it holds.
      void closeIterator(stream[Symbol.asyncIterator]()).catch((err: unknown) => this.report(err));
      this.reportResponse(request, status, request.startedAt);
      if (close) this.endSocket();
      else if (!flushed) this.blockWrites();
      return;
    }
    this.current = request;
    if (!flushed) this.blockWrites();
    void this.pump(request, status, stream, chunked, close, length);
  }

  /** Write the chunks of a streamed response as the socket drains; then go on with the queue. */
  private async pump(request: IncomingRequest, status: number, stream: AsyncIterable<Uint8Array>, chunked: boolean,
    close: boolean, length: number | undefined): Promise<void> {
    const socket = this.socket;
    const iterator = stream[Symbol.asyncIterator]();
    let complete = false;
    let settled = false;
    let sent = 0;
    try {
      for (;;) {
        if (this.writeBlocked) await new Promise<void>((resolve) => { this.drainWaiter = resolve; });
        if (this.ended) break;
        const next = await iterator.next();
        if (next.done === true) {
          settled = true;
          // Fewer bytes than announced: the client must not take the body as whole.
          complete = length === undefined || sent === length;
          break;
        }
        if (this.ended) break;
        const chunk = next.value;
        if (!(chunk instanceof Uint8Array)) throw serverErrors.invalidResponse('bodyStream must yield Uint8Arrays');
        // An empty chunk would read as the end of a chunked body.
        if (chunk.length === 0) continue;
        sent += chunk.length;
        if (length !== undefined && sent > length) throw serverErrors.invalidResponse(`bodyStream yielded more than its bodyLength ${length}`);
        // A pooled chunk (engine content/volumes.ts) goes back to its pool once the socket has written it.
        const release = (chunk as { [RELEASE_BUFFER]?: () => void })[RELEASE_BUFFER];
        const written = typeof release === 'function' ? () => release() : undefined;
        let flushed: boolean;
        if (chunked) {
          socket.cork();
          socket.write(`${chunk.length.toString(16)}\r\n`, 'latin1');
          socket.write(chunk, written);
          flushed = socket.write('\r\n', 'latin1');
          socket.uncork();
        } else {
          flushed = socket.write(chunk, written);
        }
        if (!flushed) this.blockWrites();
      }
    } catch (err) {
      settled = true;
      this.report(err);
    }
    if (!settled) await closeIterator(iterator).catch((err: unknown) => this.report(err));
    if (this.current === request) this.current = null;
    this.reportResponse(request, status, request.startedAt);
    if (!complete) {
      // Without its last chunk (or, on HTTP/1.0, cut short) the client can tell the body is incomplete.
      if (!this.ended) this.destroy();
      return;
    }
    if (this.ended) return;
    if (chunked && !socket.write('0\r\n\r\n', 'latin1') && !close) this.blockWrites();
    if (close) this.endSocket();
    else this.drive();
  }

  private wakeStream(): void {
    const waiter = this.drainWaiter;
    if (waiter === null) return;
    this.drainWaiter = null;
    waiter();
  }

  /**
   * A streamed request is answered: drop what its handler did not read and,
   * if the body is still arriving, either discard the rest (false) or have
   * the response close the connection (true). See STREAM_DRAIN_BYTES_MAX.
   */
  private abandonBody(request: IncomingRequest): boolean {
    const stream = request.bodyStream!;
    stream.discard();
    if (this.receiving !== request || this.discardingBody) return false;
    const left = this.parser.bodyBytesLeft;
    if (request.keepAlive && !this.draining && !stream.continueOwed && left <= STREAM_DRAIN_BYTES_MAX) {
      this.discardingBody = true;
      this.discardBytesLeft = STREAM_DRAIN_BYTES_MAX;
      this.parser.grantBodyBytes(Number.POSITIVE_INFINITY);
      return false;
    }
    this.receiving = null;
    return true;
  }

  private writeError(error: TesseraError, subject: HttpRequest | RequestHead | null, fatal: boolean, startedAt: bigint): void {
    const noBody = subject !== null && isHeadMethod(subject.originalMethod);
    const keepAlive = !fatal && (subject === null || !(subject instanceof IncomingRequest) || subject.keepAlive);
    const own = error.headers === undefined ? '' : serializeHeaders(error.headers) ?? '';
    this.write(error.status, ERROR_CONTENT_TYPE + own, JSON.stringify(errorBody(error)), noBody,
      subject?.httpVersion ?? 11, !keepAlive);
    this.reportResponse(subject, error.status, startedAt);
  }

  /** Serialize and send one response with a single socket write (or one corked writev). */
  private write(status: number, extra: string, body: Buffer | Uint8Array | string | null, noBody: boolean,
    httpVersion: 10 | 11, mustClose: boolean): void {
    const close = mustClose || (this.queue.length === 0 && this.current === null && (this.stopReading || (this.draining && this.caughtUp())));
    const responseHead = this.host.responseHead;
    let head = responseHead.statusLine(status) + responseHead.dateLine + extra;
    const bodyBytes = body === null ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    if (status !== 204 && status !== 304) head += `Content-Length: ${bodyBytes}\r\n`;
    if (close) head += 'Connection: close\r\n\r\n';
    else if (httpVersion === 10) head += 'Connection: keep-alive\r\n\r\n';
    else head += '\r\n';

    const socket = this.socket;
    if (!this.corked) {
      // As Node's http: hold writes so that the responses to pipelined requests answered in one
      // pass leave in one writev (3x the req/s of a write each). Answered while the parser runs
      // (a synchronous handler), they leave when it returns; else at the next tick.
      this.corked = true;
      socket.cork();
      if (this.inParser) this.uncorkAfterParser = true;
      else process.nextTick(uncorkConnection, this);
    }
    let flushed: boolean;
    if (bodyBytes === 0 || noBody || status === 204 || status === 304) {
      flushed = socket.write(head, 'latin1');
    } else if (typeof body === 'string' && (extra === '' || !NON_ASCII.test(extra))) {
      // An ASCII head and a UTF-8 body encode together in one string write.
      flushed = socket.write(head + body, 'utf8');
    } else {
      socket.cork();
      socket.write(head, 'latin1');
      flushed = socket.write(typeof body === 'string' ? Buffer.from(body, 'utf8') : body!);
      socket.uncork();
    }
    if (close) this.endSocket();
    else if (!flushed) this.blockWrites();
  }

  /**
   * Run the parser (push or resume). A throw is a bug in the parser or a
   * listener: it must never take the process down, so the connection is
   * destroyed instead. Returns false then.
   */
  private runParser(step: (this: RequestParser, chunk: Buffer) => void, chunk?: Buffer): boolean {
    this.inParser = true;
    try {
      step.call(this.parser, chunk as Buffer);
      return true;
    } catch (err) {
      this.report(err);
      this.destroy();
      return false;
    } finally {
      this.inParser = false;
      if (this.uncorkAfterParser) {
        this.uncorkAfterParser = false;
        this.uncork();
      }
      if (this.draining && !this.ended) this.drive();
    }
  }

  /** Flush the writes held since the first response of this tick. */
  uncork(): void {
    this.corked = false;
    this.socket.uncork();
  }

  private writeRaw(text: string): void {
    if (!this.ended && !this.socket.write(text, 'latin1')) this.blockWrites();
  }

  private reportResponse(subject: HttpRequest | RequestHead | null, status: number, startedAt: bigint): void {
    const onResponse = this.options.onResponse;
    if (onResponse === undefined) return;
    try {
      onResponse(subject, status, process.hrtime.bigint() - startedAt);
    } catch (err) {
      this.report(err);
    }
  }

  private report(err: unknown): void {
    const onError = this.options.onError;
    if (onError === undefined) return;
    try {
      onError(err);
    } catch {
      // A failing error reporter has nowhere left to report to.
    }
  }

  // ── Flow control ──────────────────────────────────────────────────────

  private blockWrites(): void {
    this.writeBlocked = true;
    this.drainDeadline = Date.now() + this.options.idleTimeoutMs;
    this.pauseReading();
  }

  private pauseReading(): void {
    if (this.readPaused || this.ended) return;
    this.readPaused = true;
    this.socket.pause();
  }

  private resumeSocket(): void {
    if (!this.readPaused) return;
    this.readPaused = false;
    this.socket.resume();
  }

  /** Resume parsing held input and reading the socket once the queue (or a streamed body's buffer) has room and writes flow. */
  private resumeReading(): void {
    if (this.ended || this.writeBlocked || this.inParser) return;
    while (this.parser.isPaused && !this.stopReading && this.parserMayRun()) {
      if (!this.runParser(this.parser.resume)) return;
    }
    this.checkTruncatedBody();
    if (this.peerEnded && this.current === null && this.queue.length === 0) this.afterQueueDrained();
    if (this.readPaused && !this.parser.isPaused && !this.writeBlocked && !this.ended
      && (this.receiving === null || this.parser.streamCredit > 0)) {
      this.resumeSocket();
      // Time spent paused by us does not count against the client.
      if (this.deadlineKind === HEADERS) this.setDeadline(HEADERS, this.options.headersTimeoutMs);
      else if (this.deadlineKind === BODY) this.setDeadline(BODY, this.options.bodyTimeoutMs);
    }
  }

  /**
   * Whether the paused parser may go on: a streamed body needs credit (its
   * request is queued already); anything else needs room in the queue.
   */
  private parserMayRun(): boolean {
    return this.receiving !== null ? this.parser.streamCredit > 0 : this.queueHasRoom();
  }

  /**
   * The client half-closed while a streamed body is incomplete and all its
   * input is parsed: the body can never complete.
   */
  private checkTruncatedBody(): void {
    if (!this.peerEnded || this.receiving === null || this.parser.isPaused || this.inParser || this.ended) return;
    const head = this.parser.currentHead;
    this.parser.destroy();
    this.onError(serverErrors.bodyAborted(), head);
  }

  /** Whether parsing may run ahead: the queue is within pipelineDepthMax and PIPELINE_BODY_BYTES_MAX. */
  private queueHasRoom(): boolean {
    return this.queue.length < this.options.pipelineDepthMax
      && (this.queue.length === 0 || this.queuedBodyBytes < PIPELINE_BODY_BYTES_MAX);
  }

  private stopParsing(): void {
    this.stopReading = true;
    this.parser.destroy();
  }

  // ── Closing ───────────────────────────────────────────────────────────

  /** Half-close after the last response; keep dropping input for LINGER_MS, then destroy. */
  private endSocket(): void {
    if (this.ended) return;
    this.ended = true;
    this.stopParsing();
    this.socket.end();
    this.setDeadline(LINGER, LINGER_MS);
    this.resumeSocket();
  }

  destroy(): void {
    this.ended = true;
    this.stopParsing();
    this.socket.destroy();
  }

  /**
   * The server is closing: from now on the response that leaves this
   * connection with nothing else received or owed carries `Connection: close`
   * and the connection closes after it. Requests already sent (pipelined, or
   * still in the socket's buffer) are answered first; a connection that has
   * received nothing waits for endIfIdle(), as its request may not be read yet.
   */
  beginDrain(): void {
    if (this.ended || this.stopReading) return;
    this.draining = true;
  }

  /** The server's drain window is over: close if nothing is received, running or owed. */
  endIfIdle(): void {
    if (!this.ended && this.current === null && this.queue.length === 0 && this.caughtUp()) this.endSocket();
  }

  /** Nothing of a next request has been received or is held back (the parser is between requests, outside a parse). */
  private caughtUp(): boolean {
    return !this.inParser && this.parser.idle && this.receiving === null;
  }

  // ── Deadlines ─────────────────────────────────────────────────────────

  private readonly onExactTimer = (): void => {
    this.exactTimer = null;
    if (!this.ended) this.checkDeadlines(Date.now());
  };

  private setDeadline(kind: number, ms: number): void {
    this.deadlineKind = kind;
    this.deadline = kind === NONE ? 0 : Date.now() + ms;
  }

  /**
   * Called by the server's clock tick (every `tickMs`). A headers deadline
   * due before the next tick gets a one-off timer of its own: the head
   * timeout is the bound against slow-header clients, kept to the
   * millisecond rather than up to a tick late. Only connections about to
   * time out pay for a timer.
   */
  checkDeadlines(now: number, tickMs = 0): void {
    if (this.drainDeadline !== 0 && now >= this.drainDeadline) {
      // The client stopped reading its responses.
      this.destroy();
      return;
    }
    if (this.deadline === 0) return;
    if (now < this.deadline) {
      if (this.deadlineKind === HEADERS && this.deadline - now < tickMs && this.exactTimer === null) {
        this.exactTimer = setTimeout(this.onExactTimer, this.deadline - now);
        this.exactTimer.unref();
      }
      return;
    }
    switch (this.deadlineKind) {
      case HEADERS:
      case BODY: {
        if (this.readPaused) return; // Paused by us (backpressure): re-armed on resume.
        const error = this.deadlineKind === HEADERS
          ? serverErrors.headersTimeout(this.options.headersTimeoutMs)
          : serverErrors.bodyTimeout(this.options.bodyTimeoutMs);
        const head = this.parser.currentHead;
        this.parser.destroy();
        this.onError(error, head);
        return;
      }
      case IDLE:
      case LINGER:
        this.destroy();
        return;
      default:
        this.deadline = 0;
    }
  }
}
