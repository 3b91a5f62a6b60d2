/**
 * The write side of one connection: serializes response heads, writes each
 * response with a single socket write (pipelined ones corked into one
 * writev), and writes the chunks of streamed responses as the socket drains.
 * What to answer, and whether the connection closes after it, is the
 * connection's decision; the writer says whether the socket took each write
 * without going over its buffer mark (`flushed`).
 */
import type { Socket } from 'node:net';
import type { TesseraError } from '@tessera/errors';
import { serverErrors } from './errors.js';
import { serializeHeaders, type ResponseHead } from './response-head.js';
import type { HttpResponse } from './types.js';

/** The release hook of a pooled response chunk (a Symbol.for key: the engine's pool and this server share no module). */
const RELEASE_BUFFER = Symbol.for('tessera.release');

export const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';
const ERROR_CONTENT_TYPE = 'Content-Type: application/json; charset=utf-8\r\n';
const NON_ASCII = /[^\x00-\x7f]/;
/** Bodies from this many bytes are written through a buffer of their own (write()): below, as one string. */
const LONG_BODY_BYTES = 4096;

/** What the writer needs from its connection. */
export interface ResponseWriterOwner {
  /** end() or destroy() was called on the socket: nothing more is written. */
  readonly ended: boolean;
  /** A write went over the socket's buffer mark: wait for 'drain' (the connection sets `blocked`). */
  blockWrites(): void;
  report(err: unknown): void;
}

/** End an iterator early (its `finally` blocks run), if it supports that. */
export async function closeIterator(iterator: AsyncIterator<unknown>): Promise<void> {
  if (typeof iterator.return === 'function') await iterator.return();
}

/** The extra head lines of an error response: its content type and the error's own headers. */
export function errorHeaders(error: TesseraError): string {
  const own = error.headers === undefined ? '' : serializeHeaders(error.headers) ?? '';
  return ERROR_CONTENT_TYPE + own;
}

/** Why a handler's response cannot be sent (its headers aside), or null. */
export function responseProblem(response: HttpResponse): string | null {
  if (response === null || typeof response !== 'object') return 'not an object';
  const status = response.status;
  if (!Number.isInteger(status) || status < 200 || status > 599) return `status ${String(status)}`;
  const body = response.body;
  if (body !== undefined && body !== null && typeof body !== 'string' && !(body instanceof Uint8Array)) {
    return 'body must be a Buffer, a string or null';
  }
  const stream = response.bodyStream;
  if (stream !== undefined && stream !== null) {
    if (typeof (stream as Partial<AsyncIterable<Uint8Array>>)[Symbol.asyncIterator] !== 'function') {
      return 'bodyStream must be an async iterable';
    }
    if (body !== undefined && body !== null) return 'body and bodyStream are exclusive';
    const length = response.bodyLength;
    if (length !== undefined && (!Number.isSafeInteger(length) || length < 0)) {
      return 'bodyLength must be a non-negative integer';
    }
  }
  return null;
}

function uncorkWriter(writer: ResponseWriter): void {
  writer.uncork();
}

export class ResponseWriter {
  /** The socket's write buffer is over its mark: streamed chunks wait for drained(). */
  blocked = false;
  private readonly socket: Socket;
  private readonly responseHead: ResponseHead;
  private readonly owner: ResponseWriterOwner;
  /** The socket is corked (until the parser returns, or else the next tick). */
  private corked = false;
  /** Responses written while the parser runs (synchronous handlers): uncork once it returns. */
  private uncorkAfterParser = false;
  /** A streamed response waits for the write buffer to drain (or the socket to close). */
  private drainWaiter: (() => void) | null = null;

  constructor(socket: Socket, responseHead: ResponseHead, owner: ResponseWriterOwner) {
    this.socket = socket;
    this.responseHead = responseHead;
    this.owner = owner;
  }

  /**
   * Serialize and send one response with a single socket write (or one
   * corked writev). `inParser`: the parser is running (a synchronous
   * handler), so the corked writes leave when it returns (parserReturned).
   */
  write(status: number, extra: string, body: Buffer | Uint8Array | string | null, noBody: boolean,
    httpVersion: 10 | 11, close: boolean, inParser: boolean): boolean {
    const responseHead = this.responseHead;
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
      if (inParser) this.uncorkAfterParser = true;
      else process.nextTick(uncorkWriter, this);
    }
    if (bodyBytes === 0 || noBody || status === 204 || status === 304) {
      return socket.write(head, 'latin1');
    }
    if (typeof body === 'string' && (extra === '' || !NON_ASCII.test(extra))) {
      // An ASCII head and a UTF-8 body encode together in one write: a short one as one string; a long one into
      // one buffer of the exact size, as the string write would first copy head + body into a new flat string
      // on the heap (sampled: ~11 KB per 9 KB search page) and then encode it off the heap all the same.
      if (bodyBytes < LONG_BODY_BYTES) return socket.write(head + body, 'utf8');
      const bytes = Buffer.allocUnsafe(head.length + bodyBytes);
      bytes.write(head, 0, 'latin1');
      bytes.write(body, head.length, 'utf8');
      return socket.write(bytes);
    }
    socket.cork();
    socket.write(head, 'latin1');
    const flushed = socket.write(typeof body === 'string' ? Buffer.from(body, 'utf8') : body!);
    socket.uncork();
    return flushed;
  }

  /** The head of a streamed response: chunked, or framed by `length`, or (HTTP/1.0) by the end of the connection. */
  writeStreamedHead(status: number, extra: string, chunked: boolean, length: number | undefined, close: boolean,
    httpVersion: 10 | 11): boolean {
    const responseHead = this.responseHead;
    let head = responseHead.statusLine(status) + responseHead.dateLine + extra;
    if (chunked && status !== 204 && status !== 304) head += 'Transfer-Encoding: chunked\r\n';
    if (length !== undefined && status !== 204 && status !== 304) head += `Content-Length: ${length}\r\n`;
    if (close) head += 'Connection: close\r\n\r\n';
    else if (httpVersion === 10) head += 'Connection: keep-alive\r\n\r\n';
    else head += '\r\n';
    return this.socket.write(head, 'latin1');
  }

  /**
   * Write the chunks of a streamed response as the socket drains. Resolves
   * with whether the body was sent whole (false: the producer failed, the
   * socket ended, or fewer bytes than `length` came); the last chunk of a
   * chunked body is the caller's to write.
   */
  async writeStreamedBody(stream: AsyncIterable<Uint8Array>, chunked: boolean, length: number | undefined): Promise<boolean> {
    const socket = this.socket;
    const owner = this.owner;
    const iterator = stream[Symbol.asyncIterator]();
    let complete = false;
    let settled = false;
    let sent = 0;
    try {
      for (;;) {
        if (this.blocked) await new Promise<void>((resolve) => { this.drainWaiter = resolve; });
        if (owner.ended) break;
        const next = await iterator.next();
        if (next.done === true) {
          settled = true;
          // Fewer bytes than announced: the client must not take the body as whole.
          complete = length === undefined || sent === length;
          break;
        }
        if (owner.ended) break;
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
        if (!flushed) owner.blockWrites();
      }
    } catch (err) {
      settled = true;
      owner.report(err);
    }
    if (!settled) await closeIterator(iterator).catch((err: unknown) => owner.report(err));
    return complete;
  }

  /** The last chunk of a chunked body. */
  writeLastChunk(): boolean {
    return this.socket.write('0\r\n\r\n', 'latin1');
  }

  /** A head-only message (`100 Continue`). */
  writeRaw(text: string): boolean {
    return this.socket.write(text, 'latin1');
  }

  /** The socket drained (or closed): a waiting streamed response goes on. */
  drained(): void {
    this.blocked = false;
    this.wake();
  }

  wake(): void {
    const waiter = this.drainWaiter;
    if (waiter === null) return;
    this.drainWaiter = null;
    waiter();
  }

  /** The parser returned: flush what synchronous handlers wrote while it ran. */
  parserReturned(): void {
    if (!this.uncorkAfterParser) return;
    this.uncorkAfterParser = false;
    this.uncork();
  }

  /** Flush the writes held since the first response of this tick. */
  uncork(): void {
    this.corked = false;
    this.socket.uncork();
  }
}
