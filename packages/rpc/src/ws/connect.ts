/**
 * The dialling side (a shard node joining the coordinator): connects, sends
 * its hello, and after any loss redials with exponential backoff and jitter,
 * sending its hello again each time, until close().
 *
 * Calls made while disconnected (or before the first connection) wait for
 * the next connection up to their deadline, then fail with 504 rpc_timeout:
 * a heartbeat or lease renewal made during a coordinator restart goes through
 * once the coordinator is back. Calls already written when the connection
 * was lost fail at once with 503 rpc_unavailable: the other side may or may
 * not have run them, so only the caller can decide to retry.
 */
import { WebSocket, type ClientOptions } from 'ws';
import { rpcErrors } from '../errors.js';
import type { RpcHandler } from '../transport.js';
import { BACKOFF_DEFAULTS, reconnectDelayMs, type BackoffOptions } from './backoff.js';
import { awaitHello, ownHello } from './handshake.js';
import { CloseCode, encodeHello, type PeerIdentity } from './messages.js';
import type { RpcPeerOptions } from './options.js';
import { RpcPeer, closeSocket } from './peer.js';
import type { NodeCalls } from '../protocol.js';
import type { CallMap } from '../transport.js';

export interface ConnectPeerOptions extends Partial<RpcPeerOptions>, Partial<BackoffOptions> {
  /** What this side says about itself in its hello. */
  identity: PeerIdentity;
  /** Serves the other side's calls (peer.serve() may set it later). */
  handler?: RpcHandler;
  /** Opening the socket and receiving the other side's hello must take less than this. */
  handshakeTimeoutMs?: number;
  /** Certificates (PEM) a `wss://` server's certificate is verified against, instead of Node's default CAs. */
  ca?: string | Buffer;
  /** Sent in the hello: the accepting side's cluster secret (RpcServerOptions.clusterSecret). */
  clusterSecret?: string;
}

/**
 * Dial errors that only say the other side is not there (yet): a coordinator
 * restarting. Logged at debug; anything else (a certificate that does not
 * verify, TLS spoken to a plain port or the reverse, which the other side
 * answers by closing: ECONNRESET) at warn, as it will not go away by redialling.
 */
const ROUTINE_DIAL_ERRORS = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EAI_AGAIN']);

export const HANDSHAKE_TIMEOUT_MS_DEFAULT = 5000;

/**
 * Client frames are masked with a zero key, which ws then skips (no copy and
 * XOR of every payload byte on either side). Masking defends proxies against
 * cache poisoning by browser scripts (RFC 6455 §10.3); both ends here are our
 * own processes.
 */
function zeroMask(mask: Buffer): void {
  mask[0] = 0;
  mask[1] = 0;
  mask[2] = 0;
  mask[3] = 0;
}

class DialingPeer<C extends CallMap<C>> extends RpcPeer<C> {
  private dialing: WebSocket | undefined;
  private redialTimer: NodeJS.Timeout | undefined;
  private attempt = 0;
  private readonly backoff: BackoffOptions;
  private readonly handshakeTimeoutMs: number;

  constructor(private readonly url: string, private readonly connectOptions: ConnectPeerOptions) {
    super(connectOptions, true);
    this.backoff = {
      reconnectInitialMs: connectOptions.reconnectInitialMs ?? BACKOFF_DEFAULTS.reconnectInitialMs,
      reconnectMaxMs: connectOptions.reconnectMaxMs ?? BACKOFF_DEFAULTS.reconnectMaxMs,
    };
    this.handshakeTimeoutMs = connectOptions.handshakeTimeoutMs ?? HANDSHAKE_TIMEOUT_MS_DEFAULT;
    if (connectOptions.handler !== undefined) this.serve(connectOptions.handler);
  }

  dial(): void {
    this.redialTimer = undefined;
    if (this.closed) return;
    const clientOptions: ClientOptions & { closeTimeout: number } = {
      maxPayload: this.options.messageBytesMax,
      perMessageDeflate: false,
      handshakeTimeout: this.handshakeTimeoutMs,
      generateMask: zeroMask,
      closeTimeout: this.options.closeTimeoutMs,
    };
    if (this.connectOptions.ca !== undefined) clientOptions.ca = this.connectOptions.ca;
    const socket = new WebSocket(this.url, clientOptions);
    this.dialing = socket;
    let opened = false;
    socket.on('error', (err) => {
      const code = (err as NodeJS.ErrnoException).code;
      const routine = opened || (code !== undefined && ROUTINE_DIAL_ERRORS.has(code));
      this.options.logger[routine ? 'debug' : 'warn']({ url: this.url, err }, 'rpc socket error');
    });
    socket.once('open', () => {
      opened = true;
      socket.send(encodeHello(ownHello(this.connectOptions.identity, this.options.messageBytesMax, this.connectOptions.clusterSecret)));
      awaitHello(socket, this.options.messageBytesMax, this.handshakeTimeoutMs, (hello) => {
        this.dialing = undefined;
        this.attempt = 0;
        this.options.logger.info({ url: this.url, peer: hello.name, role: hello.role }, 'rpc connected');
        this.attach(socket, hello);
      }, (failure) => {
        // Refused for its cluster secret: redialling (with the same backoff) succeeds only once the secret is fixed.
        if (failure.closedBy === CloseCode.clusterSecretRefused) this.options.logger.error({ url: this.url, reason: failure.reason }, 'rpc refused by the other side: cluster secret');
        else this.options.logger.warn({ url: this.url, reason: failure.reason }, 'rpc handshake failed');
        if (failure.closeCode !== undefined) socket.close(failure.closeCode, failure.reason.slice(0, 120));
      });
    });
    socket.once('close', () => {
      if (this.dialing !== socket) return;
      this.dialing = undefined;
      this.scheduleDial();
    });
  }

  protected override onLost(): void {
    this.scheduleDial();
  }

  protected override stopConnecting(): Promise<void> {
    clearTimeout(this.redialTimer);
    this.redialTimer = undefined;
    const socket = this.dialing;
    this.dialing = undefined;
    return socket === undefined ? Promise.resolve() : closeSocket(socket, 1000, 'closing');
  }

  private scheduleDial(): void {
    if (this.closed || this.redialTimer !== undefined || this.dialing !== undefined) return;
    const delayMs = reconnectDelayMs(this.attempt++, this.backoff);
    this.options.logger.debug({ url: this.url, attempt: this.attempt, delayMs }, 'rpc redial scheduled');
    this.redialTimer = setTimeout(() => this.dial(), delayMs);
  }
}

/**
 * Dials `url` (`ws://host:port`) at once and keeps the connection up until
 * close(). Returns before the connection is up: `whenConnected()` waits for it,
 * and calls made meanwhile wait too. A URL that is not ws:// or wss:// is a
 * 400 invalid_rpc_url.
 */
export function connectPeer<C extends CallMap<C> = NodeCalls>(url: string, options: ConnectPeerOptions): RpcPeer<C> {
  if (!URL.canParse(url) || !['ws:', 'wss:'].includes(new URL(url).protocol)) throw rpcErrors.invalidUrl(url);
  const peer = new DialingPeer<C>(url, options);
  peer.dial();
  return peer;
}
