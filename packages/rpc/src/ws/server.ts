/**
 * The accepting side (the coordinator): listens for peers that join by
 * dialling, exchanges hellos, and hands each joined peer to `onPeer`. An
 * accepted peer lives as long as its connection; a node that reconnects
 * arrives as a new peer.
 *
 * With `tls` it serves `wss://` (an HTTPS server of its own carries the
 * upgrade); with `clusterSecret` a joining peer's hello must carry the same
 * secret, or the connection is closed with 4401 and the reason.
 */
import type { IncomingMessage } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { SecureContextOptions } from 'node:tls';
import { WebSocketServer, type ServerOptions, type WebSocket } from 'ws';
import type { RpcHandler } from '../transport.js';
import { awaitHello, clusterSecretDigest, clusterSecretRefusal, ownHello } from './handshake.js';
import { CloseCode, encodeHello, HELLO_BYTES_MAX, type PeerHello, type PeerIdentity } from './messages.js';
import { peerOptions, type RpcPeerOptions } from './options.js';
import { RpcPeer, closeSocket } from './peer.js';
import type { NodeCalls } from '../protocol.js';
import type { CallMap } from '../transport.js';

/** `C`: the calls this side makes of each accepted peer (a coordinator: NodeCalls). */
export interface RpcServerOptions<C extends CallMap<C> = NodeCalls> extends Partial<RpcPeerOptions> {
  /** Interface to listen on; default loopback. */
  host?: string;
  /** Port; 0 picks a free one (see `port` once listening). */
  port?: number;
  /** What this side says about itself in its hello. */
  identity: PeerIdentity;
  /** Serves the calls of every accepted peer (onPeer may set another with peer.serve()). */
  handler?: RpcHandler;
  /** A peer joined; called in the same turn as its hello, before any of its calls is read. */
  onPeer?: (peer: RpcPeer<C>, hello: PeerHello) => void;
  /** A connection that sends no hello within this is closed. */
  helloTimeoutMs?: number;
  /** Connections open at once (joined or in handshake); more are refused with 1013. */
  connectionsMax?: number;
  /** Serve `wss://` with this certificate and key (PEM), instead of `ws://`. */
  tls?: SecureContextOptions;
  /** Joining peers must send this secret in their hello (checked in constant time; never logged). */
  clusterSecret?: string;
}

type ServerSettings = Required<Pick<RpcServerOptions, 'host' | 'port' | 'helloTimeoutMs' | 'connectionsMax'>>;

export const RPC_SERVER_DEFAULTS: Readonly<ServerSettings> = Object.freeze({ host: '127.0.0.1', port: 0, helloTimeoutMs: 5000, connectionsMax: 1024 });

export class RpcServer<C extends CallMap<C> = NodeCalls> {
  private readonly peerSet = new Set<RpcPeer<C>>();
  private readonly handshaking = new Set<WebSocket>();
  private closing: Promise<void> | undefined;
  private readonly secretDigest: Buffer | undefined;

  private constructor(
    private readonly wss: WebSocketServer,
    private readonly options: RpcServerOptions<C> & RpcPeerOptions & ServerSettings,
    /** The HTTPS server carrying `wss://` upgrades, when `tls` was given. */
    private readonly https: HttpsServer | undefined,
  ) {
    this.secretDigest = options.clusterSecret === undefined ? undefined : clusterSecretDigest(options.clusterSecret);
    wss.on('connection', (socket, request) => this.accept(socket, request));
  }

  static async listen<C extends CallMap<C> = NodeCalls>(options: RpcServerOptions<C>): Promise<RpcServer<C>> {
    const merged = {
      ...options,
      ...peerOptions(options),
      host: options.host ?? RPC_SERVER_DEFAULTS.host,
      port: options.port ?? RPC_SERVER_DEFAULTS.port,
      helloTimeoutMs: options.helloTimeoutMs ?? RPC_SERVER_DEFAULTS.helloTimeoutMs,
      connectionsMax: options.connectionsMax ?? RPC_SERVER_DEFAULTS.connectionsMax,
    };
    const serverOptions: ServerOptions & { closeTimeout: number } = {
      maxPayload: merged.messageBytesMax,
      perMessageDeflate: false,
      clientTracking: false,
      closeTimeout: merged.closeTimeoutMs,
    };
    let https: HttpsServer | undefined;
    if (merged.tls === undefined) {
      serverOptions.host = merged.host;
      serverOptions.port = merged.port;
    } else {
      // A handshake gets as long as a hello: a socket that never completes one is not kept for Node's 120 s.
      https = createHttpsServer({ ...merged.tls, handshakeTimeout: merged.helloTimeoutMs }, (_req, res) => {
        res.writeHead(426, { Connection: 'close', 'Content-Type': 'text/plain' }).end('Upgrade Required: this port speaks WebSocket RPC\n');
      });
      // A client that fails the handshake (no TLS, an unknown CA) is its own problem. Node does not destroy
      // the socket after a handshake timeout, only after a protocol error: destroyed here in every case.
      https.on('tlsClientError', (err, socket) => {
        merged.logger.debug({ err }, 'rpc tls handshake failed');
        socket.destroy();
      });
      serverOptions.server = https;
    }
    const wss = new WebSocketServer(serverOptions);
    await new Promise<void>((resolve, reject) => {
      wss.once('listening', resolve);
      wss.once('error', reject);
      https?.listen(merged.port, merged.host);
    });
    wss.on('error', (err) => merged.logger.error({ err }, 'rpc server error'));
    return new RpcServer(wss, merged, https);
  }

  get port(): number {
    return (this.wss.address() as AddressInfo).port;
  }

  /** `ws://host:port` (`wss://` with TLS) to give to connectPeer. */
  get url(): string {
    const { address, family } = this.wss.address() as AddressInfo;
    return `${this.https === undefined ? 'ws' : 'wss'}://${family === 'IPv6' ? `[${address}]` : address}:${this.port}`;
  }

  /** New connections get this certificate and key (a renewed certificate); only for a server listening with `tls`. */
  replaceTls(tls: SecureContextOptions): void {
    if (this.https === undefined) throw new Error('the RPC server does not listen with tls');
    this.https.setSecureContext(tls);
  }

  /** Peers that joined and are still connected. */
  get peers(): ReadonlySet<RpcPeer<C>> {
    return this.peerSet;
  }

  /** Stops listening and closes every connection. */
  close(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    const waits: Array<Promise<void>> = [];
    for (const socket of this.handshaking) waits.push(closeSocket(socket, CloseCode.goingAway, 'server closing'));
    for (const peer of this.peerSet) waits.push(peer.close());
    waits.push(new Promise((resolve) => this.wss.close(() => resolve())));
    // ws leaves a server it was given open.
    const https = this.https;
    this.closing = Promise.all(waits).then(() => {
      if (https === undefined) return undefined;
      return new Promise<void>((resolve) => {
        https.close(() => resolve());
        // Once the peers have closed: what is left is plain HTTPS (answered 426) held in keep-alive.
        https.closeAllConnections();
      });
    });
    return this.closing;
  }

  private accept(socket: WebSocket, request: IncomingMessage): void {
    const { logger } = this.options;
    socket.on('error', (err) => logger.debug({ err }, 'rpc socket error'));
    if (this.closing !== undefined || this.handshaking.size + this.peerSet.size >= this.options.connectionsMax) {
      logger.warn({ connectionsMax: this.options.connectionsMax }, 'rpc connection refused');
      socket.close(CloseCode.tryAgainLater, 'too many connections');
      return;
    }
    this.handshaking.add(socket);
    // Until its hello is in, a connection is nobody (no secret checked yet): it may not make this process hold a
    // messageBytesMax frame (256 MiB by default; ws gathers a frame whole), only as much as a hello takes.
    const raw = request.socket;
    let received = 0;
    // Set by ws's own listener, which runs first: the bytes that came with the hello in one chunk are the peer's.
    let settled = false;
    const countBeforeHello = (chunk: Buffer): void => {
      if (settled) return;
      received += chunk.length;
      if (received <= HELLO_BYTES_MAX) return;
      raw.off('data', countBeforeHello);
      logger.warn({ reason: `more than ${HELLO_BYTES_MAX} bytes before the hello` }, 'rpc handshake failed');
      raw.destroy();
    };
    raw.on('data', countBeforeHello);
    awaitHello(socket, this.options.messageBytesMax, this.options.helloTimeoutMs, (hello) => {
      settled = true;
      raw.off('data', countBeforeHello);
      this.handshaking.delete(socket);
      const refusal = clusterSecretRefusal(this.secretDigest, hello);
      // Nothing past this point (onPeer, logs, /.nodes) sees the secret.
      delete hello.clusterSecret;
      if (refusal !== undefined) {
        logger.warn({ peer: hello.name, role: hello.role, reason: refusal }, 'rpc peer refused');
        socket.close(CloseCode.clusterSecretRefused, refusal);
        return;
      }
      this.join(socket, hello);
    }, (failure) => {
      settled = true;
      raw.off('data', countBeforeHello);
      this.handshaking.delete(socket);
      logger.warn({ reason: failure.reason }, 'rpc handshake failed');
      if (failure.closeCode !== undefined) socket.close(failure.closeCode, failure.reason.slice(0, 120));
    });
  }

  private join(socket: WebSocket, hello: PeerHello): void {
    const peer = new RpcPeer<C>(this.options);
    if (this.options.handler !== undefined) peer.serve(this.options.handler);
    socket.send(encodeHello(ownHello(this.options.identity, this.options.messageBytesMax)));
    peer.attach(socket, hello);
    this.peerSet.add(peer);
    const forget = (): void => { this.peerSet.delete(peer); };
    peer.once('lost', forget);
    peer.once('closed', forget);
    this.options.logger.info({ peer: hello.name, role: hello.role }, 'rpc peer joined');
    try {
      this.options.onPeer?.(peer, hello);
    } catch (err) {
      this.options.logger.error({ peer: hello.name, err }, 'rpc peer refused by onPeer');
      void peer.close();
    }
  }
}
