/**
 * Tessera's HTTP/1.1 server over `node:net` (Node's `http` rejects UPDATE,
 * INFO, SEARCH…). Owns the listening socket, the set of connections, the
 * shared response-head cache and one coarse clock.
 *
 * Why one clock: a `setTimeout` per request (or per socket, re-armed on
 * every byte) costs a timer-list insert and removal per event. As undici's
 * lib/util/timers.js, each connection instead keeps its deadlines as numbers
 * and a single interval checks them all; a timeout fires up to one tick late,
 * which no client can tell from network jitter. The tick also refreshes the
 * cached `Date:` line.
 *
 * With `tls`, the listener is a `tls.Server`: each connection is a TLSSocket
 * (a net.Socket subclass) handed over once its handshake is done, so the
 * connection code is the same. A handshake that fails (a plain-HTTP request,
 * garbage, an unknown CA at the client) or takes longer than
 * headersTimeoutMs ends that socket only, unreported (it is the client's
 * doing, as a malformed request is).
 */
import { createServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { createServer as createTlsServer, Server as TlsServer, type SecureContextOptions, type TLSSocket } from 'node:tls';
import type { RequestParserOptions } from '../parser/request-parser.js';
import { Connection, type ConnectionHost } from './connection.js';
import { serverErrors } from './errors.js';
import { DEFAULT_CLOSE_GRACE_MS, resolveHttpServerOptions } from './options.js';
import { ResponseHead } from './response-head.js';
import type { HttpServer, HttpServerOptions, RequestHandler } from './types.js';

export { DEFAULT_CLOSE_GRACE_MS, DEFAULT_HTTP_SERVER_OPTIONS } from './options.js';

/**
 * A closing server keeps its listener open until no connection has arrived
 * for this long. Closing a listening socket resets every connection still in
 * the kernel's accept backlog: clients that had sent a whole request before
 * the shutdown would see ECONNRESET. 250 ms is many event-loop turns, each of
 * which accepts the whole backlog; a load balancer that saw /readyz turn 503
 * has stopped sending by then or keeps the window open (up to half the grace).
 */
export const DRAIN_QUIET_MS = 250;

/** Clock period: a quarter of the shortest timeout, at least 10 ms, at most 1 s. */
export function clockTickMs(options: Pick<HttpServerOptions, 'headersTimeoutMs' | 'bodyTimeoutMs' | 'idleTimeoutMs'>): number {
  const shortest = Math.min(options.headersTimeoutMs, options.bodyTimeoutMs, options.idleTimeoutMs);
  return Math.min(1000, Math.max(10, Math.floor(shortest / 4)));
}

/**
 * A client that could not complete the TLS handshake: nothing to answer or
 * report. Node destroys the socket after a protocol error but not after a
 * handshake timeout (a client that connects and sends nothing would hold it
 * for ever): destroyed here in every case.
 */
function dropHandshakeFailure(_err: Error, socket: TLSSocket): void {
  socket.destroy();
}

class TesseraHttpServer implements HttpServer, ConnectionHost {
  readonly options: HttpServerOptions;
  readonly parserOptions: RequestParserOptions;
  readonly handler: RequestHandler;
  readonly responseHead: ResponseHead;
  private readonly server: NetServer;
  private readonly live = new Set<Connection>();
  private readonly tickMs: number;
  private clock: NodeJS.Timeout | null = null;
  private closing: Promise<void> | null = null;
  private finishClose: (() => void) | null = null;
  private listenerClosed = false;
  private grace: NodeJS.Timeout | null = null;
  /** While closing: when the listener closes at the latest (half the grace), and when the last connection arrived. */
  private listenerDeadline = 0;
  private lastConnectionAt = 0;
  private quietTimer: NodeJS.Timeout | null = null;

  constructor(options: HttpServerOptions, handler: RequestHandler) {
    this.options = options;
    this.handler = handler;
    this.parserOptions = {
      headerBytesMax: options.headerBytesMax,
      urlBytesMax: options.urlBytesMax,
      bodyBytesMax: options.bodyBytesMax,
    };
    this.responseHead = new ResponseHead(options.serverName);
    this.tickMs = clockTickMs(options);
    const socketOptions = { allowHalfOpen: true, noDelay: true };
    if (options.tls === undefined) {
      this.server = createServer(socketOptions, this.onConnection);
    } else {
      // 'secureConnection' sockets: the handshake is done before the request deadlines start. ALPN says
      // HTTP/1.1, so a client that offers h2 (curl, browsers) settles on it rather than guessing.
      this.server = createTlsServer({
        ALPNProtocols: ['http/1.1'], ...options.tls, ...socketOptions, handshakeTimeout: options.headersTimeoutMs,
      }, this.onConnection);
      this.server.on('tlsClientError', dropHandshakeFailure);
    }
  }

  get connections(): number {
    return this.live.size;
  }

  replaceTls(tls: SecureContextOptions): void {
    if (!(this.server instanceof TlsServer)) throw serverErrors.invalidOption('tls', 'the server was not created with tls');
    this.server.setSecureContext(tls);
  }

  private readonly onConnection = (socket: Socket): void => {
    if (this.listenerClosed) {
      socket.on('error', () => undefined);
      socket.destroy();
      return;
    }
    const connection = new Connection(this, socket);
    this.live.add(connection);
    if (this.closing !== null) {
      // Accepted from the backlog while draining: answer what it sent, with `Connection: close`.
      this.lastConnectionAt = Date.now();
      connection.beginDrain();
    }
  };

  /** Request body bytes the connections hold now (HttpServerOptions.bodiesBytesMax). */
  bodyBytesHeld = 0;

  takeBodyBytes(n: number): boolean {
    const max = this.options.bodiesBytesMax;
    if (max !== undefined && this.bodyBytesHeld + n > max) return false;
    this.bodyBytesHeld += n;
    return true;
  }

  giveBodyBytes(n: number): void {
    this.bodyBytesHeld -= n;
  }

  connectionClosed(connection: Connection): void {
    this.live.delete(connection);
    if (this.finishClose !== null) this.maybeFinishClose();
  }

  private readonly tick = (): void => {
    const now = Date.now();
    this.responseHead.updateDate(now);
    for (const connection of this.live) connection.checkDeadlines(now, this.tickMs);
  };

  listen(port: number, host: string): Promise<{ port: number; host: string }> {
    return new Promise((resolve, reject) => {
      const server = this.server;
      const onError = (err: Error): void => {
        server.off('listening', onListening);
        reject(err);
      };
      const onListening = (): void => {
        server.off('error', onError);
        server.on('error', this.onServerError);
        this.responseHead.updateDate(Date.now());
        if (this.clock === null) {
          this.clock = setInterval(this.tick, this.tickMs);
          this.clock.unref();
        }
        const address = server.address() as AddressInfo;
        resolve({ port: address.port, host: address.address });
      };
      server.once('error', onError);
      server.once('listening', onListening);
      server.listen(port, host);
    });
  }

  private readonly onServerError = (err: Error): void => {
    const onError = this.options.onError;
    if (onError === undefined) return;
    try {
      onError(err);
    } catch {
      // Nowhere left to report to.
    }
  };

  /**
   * Drain (see HttpServer.close): every connection answers what it has been
   * sent with `Connection: close`; the listener stays open, accepting and
   * answering the connections already queued, until none has arrived for
   * DRAIN_QUIET_MS (at most half the grace); then idle connections are closed.
   */
  close(graceMs: number = DEFAULT_CLOSE_GRACE_MS): Promise<void> {
    if (this.closing !== null) return this.closing;
    this.closing = new Promise<void>((resolve) => {
      this.finishClose = resolve;
      for (const connection of this.live) connection.beginDrain();
      if (!this.server.listening) {
        this.listenerClosed = true;
        this.endIdleConnections();
      } else {
        const now = Date.now();
        this.lastConnectionAt = now;
        this.listenerDeadline = now + Math.floor(graceMs / 2);
        this.armQuietCheck(now);
      }
      this.grace = setTimeout(() => {
        this.closeListener();
        for (const connection of this.live) connection.destroy();
      }, graceMs);
      this.maybeFinishClose();
    });
    return this.closing;
  }

  private armQuietCheck(now: number): void {
    const at = Math.min(this.lastConnectionAt + DRAIN_QUIET_MS, this.listenerDeadline);
    this.quietTimer = setTimeout(this.onQuietTimer, Math.max(0, at - now));
  }

  /**
   * Timers run before the loop polls for I/O: after a blocked turn, connections
   * may wait in the backlog unaccepted. setImmediate runs after that poll, so
   * the check below has seen every connection that was waiting.
   */
  private readonly onQuietTimer = (): void => {
    this.quietTimer = null;
    setImmediate(this.quietCheck);
  };

  private readonly quietCheck = (): void => {
    const now = Date.now();
    if (now < this.listenerDeadline && now - this.lastConnectionAt < DRAIN_QUIET_MS) {
      this.armQuietCheck(now);
      return;
    }
    this.closeListener();
  };

  private closeListener(): void {
    if (this.listenerClosed) return;
    this.listenerClosed = true;
    // The callback runs once the listener is closed and Node has seen every socket close.
    this.server.close(() => this.maybeFinishClose());
    this.endIdleConnections();
  }

  /** Everything sent before the drain began has been read by now: a connection with nothing received and nothing owed closes. */
  private endIdleConnections(): void {
    for (const connection of this.live) connection.endIfIdle();
  }

  /** Resolve close() once the listener is closed and every connection has run its own 'close' handler. */
  private maybeFinishClose(): void {
    if (this.finishClose === null || !this.listenerClosed || this.live.size > 0) return;
    if (this.grace !== null) clearTimeout(this.grace);
    if (this.clock !== null) clearInterval(this.clock);
    if (this.quietTimer !== null) clearTimeout(this.quietTimer);
    this.quietTimer = null;
    this.grace = null;
    this.clock = null;
    const finish = this.finishClose;
    this.finishClose = null;
    finish();
  }
}

/** Create a server; call `listen()` to start it. Throws a TesseraError on invalid options. */
export function createHttpServer(options: Partial<HttpServerOptions>, handler: RequestHandler): HttpServer {
  if (typeof handler !== 'function') throw serverErrors.invalidOption('handler', 'must be a function');
  return new TesseraHttpServer(resolveHttpServerOptions(options), handler);
}
