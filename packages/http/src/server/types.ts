import type { SecureContextOptions } from 'node:tls';

/**
 * Public shapes of the HTTP layer. The server parses HTTP/1.1 itself (Node's
 * `http` rejects UPDATE, INFO…) and hands each complete request to one handler.
 */

/** The request line and header section, known before the body is read. */
export interface RequestHead {
  /** Effective method after `X-HTTP-Method-Override` / `:method` mapping (upper case). */
  method: string;
  /** Method as sent on the request line (case preserved). */
  originalMethod: string;
  /** Raw request-target as sent. */
  target: string;
  /** Raw (not percent-decoded) path, without the query and without a `:method` mapping suffix. */
  path: string;
  /** Raw query string after `?` ('' when absent). */
  query: string;
  /** 10 for HTTP/1.0, 11 for HTTP/1.1. */
  httpVersion: 10 | 11;
  /** Lower-cased header names → values (null prototype); repeated headers joined with ", ". */
  headers: Record<string, string>;
}

export interface HttpRequest extends RequestHead {
  /** The whole body (empty Buffer when none, and for a streamed request). */
  readonly body: Buffer;
  /**
   * The same bytes as the pieces they arrived in, without joining them (a
   * large body is received in pieces: the parser's PIECES_BODY_BYTES_MIN);
   * one piece when the body came whole. Absent where a request is made by
   * other means than the server (tests): `body` then holds it.
   */
  readonly bodyParts?: readonly Buffer[];
  /**
   * A streamed request's body (`HttpServerOptions.streamBody`), undefined
   * otherwise: its bytes in order, read once. The handler receives the
   * request before the body is read; reading pauses while it does not pull.
   * Throws a TesseraError when the body fails: 413 `http_body_too_large`
   * (chunked body over bodyBytesMax), 408 `http_body_timeout`, 400
   * `http_body_aborted` (client gone) or 400 bad chunked framing; answering
   * with that error (or any response) then closes the connection. Bytes the
   * handler leaves unread when it answers are discarded by the server.
   */
  bodyStream: AsyncIterable<Buffer> | undefined;
  remoteAddress: string;
  /** process.hrtime.bigint() when the first byte of the request arrived. */
  startedAt: bigint;
}

export interface HttpResponse {
  status: number;
  headers?: Record<string, string | number>;
  /** Omitted/null = no body. On HEAD the server sends the headers only. */
  body?: Buffer | string | null;
  /**
   * A body produced while it is sent (instead of `body`): each chunk is
   * written as it comes (HTTP/1.1 chunked; HTTP/1.0 closes the connection
   * after it), the next one pulled only once the socket has drained, so the
   * producer runs at the client's pace. Requests pipelined behind wait for
   * its end. If it throws, or the client goes away, the connection is
   * destroyed (the client sees a truncated body, never a complete-looking
   * one) and the iterator's `return()` runs; on HEAD, 204 and 304 it is not
   * read at all.
   */
  bodyStream?: AsyncIterable<Uint8Array> | null;
  /**
   * The exact length of `bodyStream`, when known (a stored blob): sent as
   * Content-Length instead of the chunked coding (HEAD gets it too). A stream
   * that yields more or fewer bytes ends the connection.
   */
  bodyLength?: number;
}

export type RequestHandler = (req: HttpRequest) => Promise<HttpResponse> | HttpResponse;

export interface HttpServerOptions {
  /** Request line + header section, bytes; beyond → 431. */
  headerBytesMax: number;
  /** Request-target bytes; beyond → 414. */
  urlBytesMax: number;
  /**
   * Body bytes; a function may choose by request head (e.g. 4 GiB for a streamed RESTORE).
   * Beyond → 413: a Content-Length before reading, a chunked body as counted (for a streamed body,
   * thrown by `bodyStream`).
   */
  bodyBytesMax: number | ((head: RequestHead) => number);
  /** Time allowed to receive the whole request head, from its first byte. */
  headersTimeoutMs: number;
  /** Time allowed without receiving any byte while a body is being read. */
  bodyTimeoutMs: number;
  /** Idle keep-alive connection lifetime. */
  idleTimeoutMs: number;
  /** Requests parsed ahead of the one being answered on one connection (pipelining bound). */
  pipelineDepthMax: number;
  /**
   * Request body bytes all connections together may hold (undefined: no
   * bound): the bodies being received, queued and handled, as their bytes
   * arrive, and a streamed body's buffer bound while its request runs. A
   * request whose body would go past it is answered 503 `http_overloaded`
   * and its connection closed; what other connections hold is untouched.
   * Without it, enough connections each sending a body up to
   * `bodyBytesMax` at once hold connections × bodyBytesMax.
   */
  bodiesBytesMax?: number;
  /**
   * Called once a head is parsed (after method override/mapping): true hands the request to the
   * handler at once with `bodyStream`, so the body is read with bounded memory as the handler pulls.
   * Default: never stream (the handler gets the whole body in `body`).
   */
  streamBody?: (head: RequestHead) => boolean;
  /** `Server:` header value. */
  serverName: string;
  /** Called after each response is written (logging, metrics). */
  onResponse?: (req: HttpRequest | RequestHead | null, status: number, durationNs: bigint) => void;
  /** Called when a handler throws or a connection fails unexpectedly. */
  onError?: (err: unknown) => void;
  /**
   * Serve HTTPS on the same port: the certificate chain and private key (PEM)
   * and any other secure-context option. Checked when the server is created
   * (an unusable certificate or key, or a pair that does not match, throws).
   */
  tls?: SecureContextOptions;
}

/** A running HTTP/1.1 server (see `createHttpServer`). */
export interface HttpServer {
  /** Start listening (port 0 = any free port); resolves with the bound address. */
  listen(port: number, host: string): Promise<{ port: number; host: string }>;
  /**
   * Stop accepting, close idle keep-alive connections at once, let requests
   * already received finish (their responses carry `Connection: close`),
   * and destroy whatever is left after `graceMs`.
   */
  close(graceMs?: number): Promise<void>;
  /** Open client connections. */
  readonly connections: number;
  /** Request body bytes the connections hold now (what bodiesBytesMax bounds). */
  readonly bodyBytesHeld: number;
  /**
   * Serve new connections with another certificate and key (a renewed
   * certificate); those open keep theirs. Only for a server created with
   * `tls`; throws when the material cannot be used, and the old one stays.
   */
  replaceTls(tls: SecureContextOptions): void;
}
