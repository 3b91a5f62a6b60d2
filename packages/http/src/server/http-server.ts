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
 */
import { createServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import type { RequestParserOptions } from '../parser/request-parser.js';
import { Connection, type ConnectionHost } from './connection.js';
import { serverErrors } from './errors.js';
import { DEFAULT_CLOSE_GRACE_MS, resolveHttpServerOptions } from './options.js';
import { ResponseHead } from './response-head.js';
import type { HttpServer, HttpServerOptions, RequestHandler } from './types.js';

export { DEFAULT_CLOSE_GRACE_MS, DEFAULT_HTTP_SERVER_OPTIONS } from './options.js';

/** Clock period: a quarter of the shortest timeout, at least 10 ms, at most 1 s. */
export function clockTickMs(options: Pick<HttpServerOptions, 'headersTimeoutMs' | 'bodyTimeoutMs' | 'idleTimeoutMs'>): number {
  const shortest = Math.min(options.headersTimeoutMs, options.bodyTimeoutMs, options.idleTimeoutMs);
  return Math.min(1000, Math.max(10, Math.floor(shortest / 4)));
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
    this.server = createServer({ allowHalfOpen: true, noDelay: true }, this.onConnection);
  }

  get connections(): number {
    return this.live.size;
  }

  private readonly onConnection = (socket: Socket): void => {
    if (this.closing !== null) {
      socket.on('error', () => undefined);
      socket.destroy();
      return;
    }
    this.live.add(new Connection(this, socket));
  };

  connectionClosed(connection: Connection): void {
    this.live.delete(connection);
    if (this.finishClose !== null) this.maybeFinishClose();
  }

  private readonly tick = (): void => {
    const now = Date.now();
    this.responseHead.updateDate(now);
    for (const connection of this.live) connection.checkDeadlines(now);
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

  close(graceMs: number = DEFAULT_CLOSE_GRACE_MS): Promise<void> {
    if (this.closing !== null) return this.closing;
    this.closing = new Promise<void>((resolve) => {
      this.finishClose = resolve;
      if (!this.server.listening) {
        this.listenerClosed = true;
      } else {
        // The callback runs once the listener is closed and Node has seen every socket close.
        this.server.close(() => {
          this.listenerClosed = true;
          this.maybeFinishClose();
        });
      }
      for (const connection of this.live) connection.beginDrain();
      this.grace = setTimeout(() => {
        for (const connection of this.live) connection.destroy();
      }, graceMs);
      this.maybeFinishClose();
    });
    return this.closing;
  }

  /** Resolve close() once the listener is closed and every connection has run its own 'close' handler. */
  private maybeFinishClose(): void {
    if (this.finishClose === null || !this.listenerClosed || this.live.size > 0) return;
    if (this.grace !== null) clearTimeout(this.grace);
    if (this.clock !== null) clearInterval(this.clock);
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
