/**
 * The body of a streamed request (`HttpServerOptions.streamBody`) as its
 * handler reads it: an async iterator over the body's bytes, in order.
 *
 * The connection pushes what the parser hands on (slices of the socket's
 * Buffers) and stops reading the socket while STREAM_BUFFER_BYTES_MAX bytes
 * wait here; every `next()` tells the connection, which reads again once
 * half of that is taken. The iteration ends with `done`, or rejects with the
 * TesseraError that ended the body: 413 over the limit, 408 body timeout,
 * 400 `http_body_aborted` when the client went away, 400 bad chunked framing.
 * Bytes received before the failure are yielded first.
 */
import type { TesseraError } from '@tessera/errors';
import { serverErrors } from './errors.js';

/**
 * Body bytes a streamed request may hold between the socket and its
 * handler. Reading pauses at this mark, so a 4 GiB RESTORE costs this much
 * memory (plus one socket read held by the parser) whatever the handler's
 * pace; 1 MiB is 16 socket reads of 64 KiB, enough to keep a consumer that
 * keeps up from ever waiting on a pause/resume round trip.
 */
export const STREAM_BUFFER_BYTES_MAX = 1024 * 1024;

/** Reading resumes once the handler has taken the buffer down to this (hysteresis: no pause/resume per read). */
export const STREAM_RESUME_BYTES = STREAM_BUFFER_BYTES_MAX / 2;

/**
 * Pieces shorter than this are copied into a shared STREAM_COALESCE_BYTES
 * Buffer instead of being kept as slices. A client sending 1-byte chunks
 * would otherwise make the buffer hold a million Buffer objects (~100 bytes
 * of heap each) for 1 MiB of data; with coalescing it holds at most
 * 2 × STREAM_BUFFER_BYTES_MAX / STREAM_PIECE_COPY_BYTES = 512 objects.
 */
export const STREAM_PIECE_COPY_BYTES = 4 * 1024;
const STREAM_COALESCE_BYTES = 16 * 1024;

/** What the stream tells its connection. */
export interface BodyStreamOwner {
  /** The handler called `next()` (bytes may have been taken from the buffer). */
  bodyPulled(stream: RequestBodyStream): void;
}

interface Waiter {
  resolve(result: IteratorResult<Buffer, undefined>): void;
  reject(error: TesseraError): void;
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });
/** Written over taken slots so the array does not keep handed-out Buffers alive. */
const EMPTY = Buffer.alloc(0);

export class RequestBodyStream implements AsyncIterableIterator<Buffer, undefined> {
  /** Pieces not yet taken; `first` indexes the next one (shift() on a long array is O(n)). */
  private chunks: Buffer[] = [];
  private first = 0;
  /** Open coalescing Buffer for short pieces, logically after `chunks`. */
  private tail: Buffer | null = null;
  private tailBytes = 0;
  private buffered = 0;
  private peak = 0;
  private ended = false;
  private failure: TesseraError | null = null;
  /** The handler answered (or broke out of its loop): buffered and later bytes are dropped. */
  private discarded = false;
  private waiter: Waiter | null = null;
  private readonly owner: BodyStreamOwner;
  /** `Expect: 100-continue` not yet answered; the connection sends `100 Continue` on the first pull. */
  continueOwed: boolean;

  constructor(owner: BodyStreamOwner, continueOwed: boolean) {
    this.owner = owner;
    this.continueOwed = continueOwed;
  }

  /** Bytes received and not yet taken by the handler. */
  get bufferedBytes(): number {
    return this.buffered;
  }

  /** Most bytes ever buffered at once (tests and metrics check the bound with it). */
  get bufferedBytesPeak(): number {
    return this.peak;
  }

  /** No more bytes will come: the body is complete, failed or discarded. */
  get settled(): boolean {
    return this.ended || this.failure !== null || this.discarded;
  }

  get isDiscarded(): boolean {
    return this.discarded;
  }

  // ── Connection side ───────────────────────────────────────────────────

  /** Body bytes arrived (a slice the stream may keep: socket Buffers are never reused). */
  push(data: Buffer): void {
    if (this.settled) return;
    const waiter = this.waiter;
    if (waiter !== null) {
      // The buffer is empty whenever someone waits: hand the piece over directly.
      this.waiter = null;
      waiter.resolve({ done: false, value: data });
      return;
    }
    const n = data.length;
    if (n < STREAM_PIECE_COPY_BYTES) {
      let tail = this.tail;
      if (tail === null || tail.length - this.tailBytes < n) {
        if (tail !== null) this.chunks.push(tail.subarray(0, this.tailBytes));
        tail = this.tail = Buffer.allocUnsafe(STREAM_COALESCE_BYTES);
        this.tailBytes = 0;
      }
      data.copy(tail, this.tailBytes);
      this.tailBytes += n;
    } else {
      if (this.tail !== null) this.closeTail();
      this.chunks.push(data);
    }
    this.buffered += n;
    if (this.buffered > this.peak) this.peak = this.buffered;
  }

  /** The body is complete. */
  end(): void {
    if (this.settled) return;
    this.ended = true;
    const waiter = this.waiter;
    if (waiter !== null) {
      this.waiter = null;
      waiter.resolve(DONE);
    }
  }

  /** The body failed: the handler gets `error` after the bytes already buffered. */
  fail(error: TesseraError): void {
    if (this.settled) return;
    this.failure = error;
    const waiter = this.waiter;
    if (waiter !== null) {
      this.waiter = null;
      waiter.reject(error);
    }
  }

  /** The response is sent: drop the buffer; a later `next()` is a handler bug and rejects. */
  discard(): void {
    if (this.discarded) return;
    this.drop();
    this.discarded = true;
    const waiter = this.waiter;
    if (waiter !== null) {
      this.waiter = null;
      waiter.reject(serverErrors.bodyStreamMisuse('the response was sent before the body was read'));
    }
  }

  /** The failure this stream ended with, if any (the connection does not report it as a server fault). */
  get error(): TesseraError | null {
    return this.failure;
  }

  // ── Handler side ──────────────────────────────────────────────────────

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<Buffer, undefined>> {
    if (this.discarded) {
      return Promise.reject(serverErrors.bodyStreamMisuse('the response was sent before the body was read'));
    }
    if (this.waiter !== null) {
      return Promise.reject(serverErrors.bodyStreamMisuse('next() called again before the previous call settled'));
    }
    let result: IteratorResult<Buffer, undefined> | null = null;
    if (this.first < this.chunks.length) {
      const chunk = this.chunks[this.first]!;
      this.chunks[this.first++] = EMPTY;
      if (this.first === this.chunks.length) {
        this.chunks.length = 0;
        this.first = 0;
      }
      this.buffered -= chunk.length;
      result = { done: false, value: chunk };
    } else if (this.tail !== null) {
      const chunk = this.tail.subarray(0, this.tailBytes);
      this.tail = null;
      this.buffered -= chunk.length;
      this.tailBytes = 0;
      result = { done: false, value: chunk };
    }
    this.owner.bodyPulled(this);
    if (result !== null) return Promise.resolve(result);
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve(DONE);
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** The handler stopped iterating (`break` in `for await`): free the buffer now. */
  return(): Promise<IteratorResult<Buffer, undefined>> {
    if (!this.settled) {
      this.drop();
      this.ended = true;
    }
    return Promise.resolve(DONE);
  }

  private closeTail(): void {
    this.chunks.push(this.tail!.subarray(0, this.tailBytes));
    this.tail = null;
    this.tailBytes = 0;
  }

  private drop(): void {
    this.chunks = [];
    this.first = 0;
    this.tail = null;
    this.tailBytes = 0;
    this.buffered = 0;
  }
}
