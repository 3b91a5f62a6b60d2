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
import { BodyPieces, PIECE_COPY_BYTES } from '../body-pieces.js';
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

/** Pieces shorter than this are coalesced (body-pieces.ts): 1 MiB of 1-byte pieces is a few dozen Buffers, not a million. */
export const STREAM_PIECE_COPY_BYTES = PIECE_COPY_BYTES;

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

export class RequestBodyStream implements AsyncIterableIterator<Buffer, undefined> {
  /** Pieces not yet taken. */
  private readonly pieces = new BodyPieces();
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
    return this.pieces.bytes;
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
    this.pieces.push(data);
    if (this.pieces.bytes > this.peak) this.peak = this.pieces.bytes;
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
    const piece = this.pieces.shift();
    this.owner.bodyPulled(this);
    if (piece !== undefined) return Promise.resolve({ done: false, value: piece });
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

  private drop(): void {
    this.pieces.clear();
  }
}
