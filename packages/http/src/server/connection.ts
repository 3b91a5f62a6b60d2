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
 *
 * Beside it: the queued items (incoming-request.ts), the write side
 * (response-writer.ts: heads, corking, streamed chunks) and the deadlines
 * (deadlines.ts). What to answer and when to close is decided here.
 */
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { errorBody, toTesseraError, type TesseraError } from '@tessera/errors';
import type { ParsedRequestHead } from '../parser/request-head.js';
import { RequestParser, type RequestParserEvents, type RequestParserOptions } from '../parser/request-parser.js';
import { RequestBodyStream, STREAM_BUFFER_BYTES_MAX, STREAM_RESUME_BYTES, type BodyStreamOwner } from './body-stream.js';
import { BODY, Deadlines, DRAIN, HEADERS, IDLE, LINGER, LINGER_MS, NONE } from './deadlines.js';
import { serverErrors } from './errors.js';
import { IncomingRequest, isHeadMethod, ProtocolFailure } from './incoming-request.js';
import { resolveMethod } from './method.js';
import { serializeHeaders, type ResponseHead } from './response-head.js';
import {
  closeIterator, CONTINUE, errorHeaders, responseProblem, ResponseWriter, type ResponseWriterOwner,
} from './response-writer.js';
import type { HttpRequest, HttpResponse, HttpServerOptions, RequestHandler, RequestHead } from './types.js';

/** What a connection needs from its server. */
export interface ConnectionHost {
  readonly options: HttpServerOptions;
  readonly parserOptions: RequestParserOptions;
  readonly handler: RequestHandler;
  readonly responseHead: ResponseHead;
  connectionClosed(connection: Connection): void;
  /** Count `n` more request body bytes held (false: over bodiesBytesMax, nothing counted). */
  takeBodyBytes(n: number): boolean;
  giveBodyBytes(n: number): void;
}

/**
 * Parsing ahead stops once the bodies of queued (not yet running) requests
 * reach this many bytes, whatever pipelineDepthMax allows: 64 pipelined
 * 64 MiB uploads must not sit in memory at once.
 */
export const PIPELINE_BODY_BYTES_MAX = 4 * 1024 * 1024;

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

/** Socket errors that are ordinary client behaviour, not worth reporting. */
const ROUTINE_SOCKET_ERRORS = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ETIMEDOUT', 'ERR_STREAM_DESTROYED']);

export class Connection implements RequestParserEvents, BodyStreamOwner, ResponseWriterOwner {
  private readonly host: ConnectionHost;
  private readonly options: HttpServerOptions;
  private readonly socket: Socket;
  private readonly parser: RequestParser;
  private readonly writer: ResponseWriter;
  private readonly deadlines: Deadlines;
  private readonly remoteAddress: string;
  /** Parsed requests not yet answered (bounded by pipelineDepthMax, plus one failure). */
  private readonly queue: (IncomingRequest | ProtocolFailure)[] = [];
  /** Body bytes of the requests in the queue. */
  private queuedBodyBytes = 0;
  /** Bytes counted against bodiesBytesMax for the body the parser is gathering, not yet a request's. */
  private gatheringBodyBytes = 0;
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
  private peerEnded = false;
  /** end() or destroy() was called on the socket (the writer reads it too). */
  ended = false;
  private inParser = false;

  constructor(host: ConnectionHost, socket: Socket) {
    this.host = host;
    this.options = host.options;
    this.socket = socket;
    this.remoteAddress = socket.remoteAddress ?? '';
    this.parser = new RequestParser(host.parserOptions, this);
    this.writer = new ResponseWriter(socket, host.responseHead, this);
    this.deadlines = new Deadlines(this.onExactTimer);
    socket.on('data', this.onData);
    socket.on('drain', this.onDrain);
    socket.on('end', this.onEnd);
    socket.on('error', this.onSocketError);
    socket.on('close', this.onClose);
    // A new connection owes its first request head: silent, it is closed (quietly) within the
    // headers timeout, not held for the idle timeout (300 silent sockets would otherwise hold
    // 300 descriptors for 60 s; measured by scripts/chaos/scenarios/r10-slowloris.mjs).
    this.deadlines.set(IDLE, Math.min(this.options.idleTimeoutMs, this.options.headersTimeoutMs));
  }

  // ── Socket events (bound once per connection) ─────────────────────────

  private readonly onData = (chunk: Buffer): void => {
    const deadlines = this.deadlines;
    if (deadlines.kind === BODY) deadlines.at = Date.now() + this.options.bodyTimeoutMs;
    if (!this.runParser(this.parser.push, chunk)) return;
    this.resumeReading();
  };

  private readonly onDrain = (): void => {
    this.deadlines.drainAt = 0;
    this.writer.drained();
    this.drive();
  };

  private readonly onEnd = (): void => {
    this.peerEnded = true;
    this.checkTruncatedBody();
    if (this.current === null && this.queue.length === 0) this.afterQueueDrained();
  };

  private readonly onSocketError = (err: Error): void => {
    const code = (err as NodeJS.ErrnoException).code;
    // A TLS client that sends a bad record (or none after a failed renegotiation) is misbehaving, not a server fault.
    if (code === undefined || !(ROUTINE_SOCKET_ERRORS.has(code) || code.startsWith('ERR_SSL_'))) this.report(err);
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
    // The running request's body counts until its handler is done (onHandlerResolved/Rejected run after a close too).
    for (const item of this.queue) this.releaseBody(item instanceof ProtocolFailure ? item.subject : item);
    this.releaseGathered();
    this.queue.length = 0;
    this.queuedBodyBytes = 0;
    this.deadlines.clear();
    this.writer.wake();
    this.host.connectionClosed(this);
  };

  // ── Parser events ─────────────────────────────────────────────────────

  onMessageBegin(): void {
    this.startedAt = process.hrtime.bigint();
    this.deadlines.set(HEADERS, this.options.headersTimeoutMs);
  }

  onHead(head: ParsedRequestHead): boolean {
    try {
      const resolved = resolveMethod(head.originalMethod, head.path, head.headers);
      head.method = resolved.method;
      head.path = resolved.path;
    } catch (err) {
      this.methodError = toTesseraError(err);
    }
    if (head.contentLength !== 0) this.deadlines.set(BODY, this.options.bodyTimeoutMs);
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
    // A streamed body holds up to its buffer's bound while its request runs.
    if (!this.host.takeBodyBytes(STREAM_BUFFER_BYTES_MAX)) {
      this.parser.destroy();
      this.onError(serverErrors.overloaded(this.options.bodiesBytesMax!), head);
      return;
    }
    const stream = new RequestBodyStream(this, head.expectContinue && head.contentLength !== 0);
    const request = new IncomingRequest(head, EMPTY_BODY, this.remoteAddress, this.startedAt, stream);
    request.heldBodyBytes = STREAM_BUFFER_BYTES_MAX;
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

  onBodyBytes(n: number): TesseraError | null {
    if (!this.host.takeBodyBytes(n)) return serverErrors.overloaded(this.options.bodiesBytesMax!);
    this.gatheringBodyBytes += n;
    return null;
  }

  onRequest(head: ParsedRequestHead, body: Buffer | Buffer[]): void {
    const receiving = this.receiving;
    if (receiving !== null) {
      // The end of a streamed body; its request is already queued, running or answered.
      this.receiving = null;
      this.discardingBody = false;
      receiving.bodyStream!.end();
    } else {
      const request = new IncomingRequest(head, body, this.remoteAddress, this.startedAt, undefined);
      request.heldBodyBytes = this.gatheringBodyBytes;
      this.gatheringBodyBytes = 0;
      this.queuedBodyBytes += request.bodyLength;
      if (this.methodError !== null) {
        this.queue.push(new ProtocolFailure(this.methodError, request, false, this.startedAt));
        this.methodError = null;
      } else {
        this.queue.push(request);
      }
    }
    this.deadlines.set(NONE, 0);
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
    // The body being gathered is dropped with the parser.
    this.releaseGathered();
    this.stopReading = true;
    this.deadlines.set(NONE, 0);
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
    while (this.current === null && !this.writer.blocked && !this.ended && this.queue.length > 0) {
      const item = this.queue.shift()!;
      if (item instanceof ProtocolFailure) {
        if (item.subject instanceof IncomingRequest) this.queuedBodyBytes -= item.subject.bodyLength;
        this.releaseBody(item.subject);
        this.writeError(item.error, item.subject, item.fatal, item.startedAt);
        continue;
      }
      this.queuedBodyBytes -= item.bodyLength;
      this.current = item;
      let result: Promise<HttpResponse> | HttpResponse;
      try {
        result = this.host.handler(item);
      } catch (err) {
        this.current = null;
        this.releaseBody(item);
        this.handlerFailed(item, err);
        continue;
      }
      if (result !== null && typeof result === 'object' && typeof (result as Promise<HttpResponse>).then === 'function') {
        (result as Promise<HttpResponse>).then(this.onHandlerResolved, this.onHandlerRejected);
        return;
      }
      this.current = null;
      this.releaseBody(item);
      this.respond(item, result as HttpResponse);
    }
    if (this.current === null && this.queue.length === 0) this.afterQueueDrained();
    this.resumeReading();
  }

  private readonly onHandlerResolved = (response: HttpResponse): void => {
    const request = this.current;
    if (request === null) return;
    this.current = null;
    this.releaseBody(request);
    if (!this.ended) this.respond(request, response);
    this.drive();
  };

  private readonly onHandlerRejected = (err: unknown): void => {
    const request = this.current;
    if (request === null) return;
    this.current = null;
    this.releaseBody(request);
    if (!this.ended) this.handlerFailed(request, err);
    this.drive();
  };

  /** Its handler is done (or will never run): the request's body no longer counts against bodiesBytesMax. */
  private releaseBody(request: HttpRequest | RequestHead | null): void {
    if (!(request instanceof IncomingRequest) || request.heldBodyBytes === 0) return;
    this.host.giveBodyBytes(request.heldBodyBytes);
    request.heldBodyBytes = 0;
  }

  private releaseGathered(): void {
    if (this.gatheringBodyBytes === 0) return;
    this.host.giveBodyBytes(this.gatheringBodyBytes);
    this.gatheringBodyBytes = 0;
  }

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
    if (this.parser.idle) this.deadlines.set(IDLE, this.options.idleTimeoutMs);
  }

  private respond(request: IncomingRequest, response: HttpResponse): void {
    const problem = responseProblem(response);
    if (problem !== null) return this.handlerFailed(request, serverErrors.invalidResponse(problem));
    const status = response.status;
    const stream = response.bodyStream;
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
    this.write(status, extra, response.body ?? null, isHeadMethod(request.originalMethod), request.httpVersion,
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
    const flushed = this.writer.writeStreamedHead(status, extra, chunked, length, close, request.httpVersion);
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
    const complete = await this.writer.writeStreamedBody(stream, chunked, length);
    if (this.current === request) this.current = null;
    this.reportResponse(request, status, request.startedAt);
    if (!complete) {
      // Without its last chunk (or, on HTTP/1.0, cut short) the client can tell the body is incomplete.
      if (!this.ended) this.destroy();
      return;
    }
    if (this.ended) return;
    if (chunked && !this.writer.writeLastChunk() && !close) this.blockWrites();
    if (close) this.endSocket();
    else this.drive();
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
    this.write(error.status, errorHeaders(error), JSON.stringify(errorBody(error)), noBody,
      subject?.httpVersion ?? 11, !keepAlive);
    this.reportResponse(subject, error.status, startedAt);
  }

  /** Send one response; the last one (nothing else received, queued or owed) closes the connection. */
  private write(status: number, extra: string, body: Buffer | Uint8Array | string | null, noBody: boolean,
    httpVersion: 10 | 11, mustClose: boolean): void {
    const close = mustClose || (this.queue.length === 0 && this.current === null && (this.stopReading || (this.draining && this.caughtUp())));
    const flushed = this.writer.write(status, extra, body, noBody, httpVersion, close, this.inParser);
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
      this.writer.parserReturned();
      if (this.draining && !this.ended) this.drive();
    }
  }

  private writeRaw(text: string): void {
    if (!this.ended && !this.writer.writeRaw(text)) this.blockWrites();
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

  report(err: unknown): void {
    const onError = this.options.onError;
    if (onError === undefined) return;
    try {
      onError(err);
    } catch {
      // A failing error reporter has nowhere left to report to.
    }
  }

  // ── Flow control ──────────────────────────────────────────────────────

  blockWrites(): void {
    this.writer.blocked = true;
    this.deadlines.drainAt = Date.now() + this.options.idleTimeoutMs;
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
    if (this.ended || this.writer.blocked || this.inParser) return;
    while (this.parser.isPaused && !this.stopReading && this.parserMayRun()) {
      if (!this.runParser(this.parser.resume)) return;
    }
    this.checkTruncatedBody();
    if (this.peerEnded && this.current === null && this.queue.length === 0) this.afterQueueDrained();
    if (this.readPaused && !this.parser.isPaused && !this.writer.blocked && !this.ended
      && (this.receiving === null || this.parser.streamCredit > 0)) {
      this.resumeSocket();
      // Time spent paused by us does not count against the client.
      const deadlines = this.deadlines;
      if (deadlines.kind === HEADERS) deadlines.set(HEADERS, this.options.headersTimeoutMs);
      else if (deadlines.kind === BODY) deadlines.set(BODY, this.options.bodyTimeoutMs);
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
    this.deadlines.set(LINGER, LINGER_MS);
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
    this.deadlines.exactTimerFired();
    if (!this.ended) this.checkDeadlines(Date.now());
  };

  /** Called by the server's clock tick (every `tickMs`): act on what is due (see Deadlines.due). */
  checkDeadlines(now: number, tickMs = 0): void {
    const due = this.deadlines.due(now, tickMs);
    switch (due) {
      case NONE:
        return;
      case HEADERS:
      case BODY: {
        if (this.readPaused) return; // Paused by us (backpressure): re-armed on resume.
        const error = due === HEADERS
          ? serverErrors.headersTimeout(this.options.headersTimeoutMs)
          : serverErrors.bodyTimeout(this.options.bodyTimeoutMs);
        const head = this.parser.currentHead;
        this.parser.destroy();
        this.onError(error, head);
        return;
      }
      case DRAIN: // The client stopped reading its responses.
      case IDLE:
      case LINGER:
        this.destroy();
        return;
      default:
    }
  }
}
