/**
 * What the connection queues: a request for the handler (IncomingRequest) or
 * a request the server answers itself with an error (ProtocolFailure), in
 * its place in the pipeline.
 */
import type { TesseraError } from '@tessera/errors';
import type { ParsedRequestHead } from '../parser/request-head.js';
import type { RequestBodyStream } from './body-stream.js';
import type { HttpRequest, RequestHead } from './types.js';

/** The request object handed to the handler. */
export class IncomingRequest implements HttpRequest {
  readonly method: string;
  readonly originalMethod: string;
  readonly target: string;
  readonly path: string;
  readonly query: string;
  readonly httpVersion: 10 | 11;
  readonly headers: Record<string, string>;
  /** The body as one Buffer, until `body` joins the pieces. */
  private whole: Buffer | undefined;
  /** The body's pieces (a large body), until `body` joins them. */
  private pieces: Buffer[] | undefined;
  readonly bodyLength: number;
  readonly bodyStream: RequestBodyStream | undefined;
  readonly remoteAddress: string;
  readonly startedAt: bigint;
  /** False when the connection closes after this response (`Connection: close`, HTTP/1.0). */
  readonly keepAlive: boolean;
  /** Body bytes counted against the server's bodiesBytesMax for this request, until its handler is done. */
  heldBodyBytes = 0;

  constructor(head: ParsedRequestHead, body: Buffer | Buffer[], remoteAddress: string, startedAt: bigint,
    bodyStream: RequestBodyStream | undefined) {
    this.method = head.method;
    this.originalMethod = head.originalMethod;
    this.target = head.target;
    this.path = head.path;
    this.query = head.query;
    this.httpVersion = head.httpVersion;
    this.headers = head.headers;
    if (Array.isArray(body)) {
      this.pieces = body;
      let n = 0;
      for (const piece of body) n += piece.length;
      this.bodyLength = n;
    } else {
      this.whole = body;
      this.bodyLength = body.length;
    }
    this.bodyStream = bodyStream;
    this.remoteAddress = remoteAddress;
    this.startedAt = startedAt;
    this.keepAlive = head.keepAlive;
  }

  /** Joined from the pieces on first use (then held once: the pieces are let go). */
  get body(): Buffer {
    if (this.whole === undefined) {
      this.whole = Buffer.concat(this.pieces!, this.bodyLength);
      this.pieces = undefined;
    }
    return this.whole;
  }

  get bodyParts(): readonly Buffer[] {
    return this.pieces ?? [this.whole!];
  }
}

/** A request answered by the server itself with an error, in its place in the queue. */
export class ProtocolFailure {
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
export function isHeadMethod(originalMethod: string): boolean {
  return originalMethod === 'HEAD';
}
