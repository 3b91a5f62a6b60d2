/**
 * One end of a WebSocket RPC connection. Symmetric: either side calls the
 * other (`call`) and serves the other's calls with its handler (`serve`),
 * because a shard node dials the coordinator yet it is mostly the coordinator
 * that calls the node. The same peer object outlives its sockets when it
 * redials (connectPeer); a peer accepted by RpcServer ends with its socket.
 *
 * Per connection everything is bounded: calls in flight and queued (the
 * limiter), incoming calls being served (`servingMax`), bytes unsent in the
 * socket (`sendBufferBytesMax`, then frames wait in the outbox until the
 * socket drains), and message size (`messageBytesMax`).
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { Socket } from 'node:net';
import type { Decoder } from '@msgpack/msgpack';
import { TesseraError, isErrorShape, toTesseraError } from '@tessera/errors';
import type { RawData, WebSocket } from 'ws';
import { rpcErrors } from '../errors.js';
import { DEADLINE_TICK_MS } from '../in-process.js';
import { InFlightLimiter } from '../limiter.js';
import type { NodeCalls } from '../protocol.js';
import type { CallMap, RpcCallOptions, RpcClient, RpcHandler } from '../transport.js';
import {
  CloseCode, MessageKind, ProtocolViolation, createDecoder, decodeMessage, encodeCall, encodeError, encodeResult, type PeerHello,
} from './messages.js';
import { peerOptions, type RpcPeerOptions } from './options.js';
import { Outbox } from './outbox.js';

/** Idle deadline ticks before the ticker stops (it restarts with the next call). */
const IDLE_TICKS_MAX = 100;

export interface RpcPeerEvents {
  /** A connection is up and both hellos were exchanged; the argument is the other side's. */
  connected: [PeerHello];
  /**
   * The connection went away without close() on this side: heartbeat
   * timeout, socket closed or broken, protocol violation. Every call already
   * sent has failed with 503 rpc_unavailable.
   */
  lost: [TesseraError];
  /** close() finished. */
  closed: [];
}

/** A call of ours awaiting its answer. `frame` is kept until the call is written. */
interface PendingCall {
  readonly id: number;
  readonly method: string;
  readonly timeoutMs: number;
  /** Date.now() past which the call fails with 504; Infinity without a deadline. */
  readonly deadline: number;
  frame: Uint8Array | undefined;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/** The state of one socket's life inside a peer. */
class Connection {
  /** Frames wait in the outbox while the socket holds more than sendBufferBytesMax. */
  blocked = false;
  readonly outbox = new Outbox<Uint8Array | PendingCall>();
  /** Something arrived since the last heartbeat tick (cheaper than a clock read per message). */
  heard = true;
  lastHeardAt = Date.now();
  heartbeat: NodeJS.Timeout | undefined;
  /** Called by the socket once the frame that crossed the send-buffer bound is written. */
  readonly onFlushed: () => void;
  /**
   * The TCP socket under the WebSocket, corked from the first frame written in
   * a turn of the event loop until its check phase (setImmediate: after every
   * I/O callback of the poll phase and their promise jobs), so the frames of
   * all the requests read in one poll — a coordinator's shard calls for many
   * HTTP requests, a node's replies to many calls — leave in one writev
   * instead of one syscall each (or each request's). ws has no public cork;
   * `_socket` is its long-standing field, and without it frames are simply
   * written one by one. Measured with scripts/bench/rpc.mjs (64 small calls in
   * flight, serving side in another process): 19k → 63k calls/s, 21 → 7.4 µs
   * CPU per call per side (corked to process.nextTick); uncorking in the
   * check phase instead of at the next tick took a coordinator under 50
   * HTTP connections of SEARCH from 4.3 to 2.4 read/write syscalls per
   * search, its nodes from 0.8 to 0.2 (scripts/bench/cluster.mjs, 2 nodes).
   */
  private readonly tcp: Socket | undefined;
  private corked = false;
  private readonly uncork = (): void => {
    this.corked = false;
    this.tcp!.uncork();
  };

  constructor(
    readonly socket: WebSocket,
    readonly remote: PeerHello,
    /** The smaller of both sides' message limits. */
    readonly sendBytesMax: number,
    readonly decoder: Decoder,
    onFlushed: (conn: Connection) => void,
  ) {
    this.onFlushed = () => onFlushed(this);
    const tcp: unknown = Reflect.get(socket, '_socket');
    this.tcp = tcp instanceof Socket ? tcp : undefined;
  }

  /** Hold this turn's frames until the loop's check phase (see `tcp`). */
  batchWrites(): void {
    if (this.corked || this.tcp === undefined) return;
    this.corked = true;
    this.tcp.cork();
    setImmediate(this.uncork);
  }
}

type PeerState = 'open' | 'lost' | 'closed';

/** `C`: the calls this side makes of the other (a coordinator's peer: NodeCalls; results are passed on as its types). */
export class RpcPeer<C extends CallMap<C> = NodeCalls> extends EventEmitter<RpcPeerEvents> implements RpcClient<C> {
  protected readonly options: RpcPeerOptions;
  private readonly limiter: InFlightLimiter;
  private handler: RpcHandler | undefined;
  private conn: Connection | undefined;
  private remoteHello: PeerHello | undefined;
  private state: PeerState = 'open';
  private lostError: TesseraError | undefined;
  private closing: Promise<void> | undefined;
  private readonly pending = new Map<number, PendingCall>();
  private nextCallId = 0;
  private servingCount = 0;
  private ticker: NodeJS.Timeout | undefined;
  private idleTicks = 0;
  private readonly onFlushed = (conn: Connection): void => this.flushOutbox(conn);

  /**
   * @param redials true when the peer reconnects after a loss (connectPeer):
   *   calls not yet written then wait for the next connection, up to their
   *   deadline. An accepted peer ends with its connection.
   */
  constructor(options: Partial<RpcPeerOptions> = {}, private readonly redials = false) {
    super();
    this.options = peerOptions(options);
    this.limiter = new InFlightLimiter(this.options.inFlightMax, this.options.queuedMax);
  }

  get closed(): boolean {
    return this.state !== 'open';
  }

  /** Our calls running now, waiting for a connection included. */
  get inFlight(): number {
    return this.limiter.inFlight;
  }

  /** The other side's calls our handler is running now. */
  get serving(): number {
    return this.servingCount;
  }

  get connected(): boolean {
    return this.conn !== undefined;
  }

  /**
   * Date.now() when the other side was last heard from (a message, ping or
   * pong), to the heartbeat interval; undefined while not connected.
   */
  get lastHeardAt(): number | undefined {
    const conn = this.conn;
    if (conn === undefined) return undefined;
    return conn.heard ? Date.now() : conn.lastHeardAt;
  }

  /** The other side's hello of the current (or last) connection. */
  get remote(): PeerHello | undefined {
    return this.remoteHello;
  }

  /** Answer the other side's calls with `handler` (replaces the previous one). */
  serve(handler: RpcHandler): void {
    this.handler = handler;
  }

  /** Resolves with the other side's hello once connected (at once if connected now). */
  whenConnected(): Promise<PeerHello> {
    if (this.conn !== undefined) return Promise.resolve(this.conn.remote);
    if (this.state !== 'open') return Promise.reject(this.state === 'lost' ? this.lostError : rpcErrors.closed());
    return new Promise((resolve, reject) => {
      const onConnected = (hello: PeerHello): void => { this.off('closed', onClosed); this.off('lost', onLost); resolve(hello); };
      const onClosed = (): void => { this.off('connected', onConnected); this.off('lost', onLost); reject(rpcErrors.closed()); };
      const onLost = (err: TesseraError): void => {
        if (this.redials) return;
        this.off('connected', onConnected); this.off('closed', onClosed); reject(err);
      };
      this.on('connected', onConnected);
      this.once('closed', onClosed);
      this.on('lost', onLost);
    });
  }

  async call<M extends keyof C & string>(method: M, params: C[M][0], options?: RpcCallOptions): Promise<C[M][1]> {
    this.assertUsable();
    const waiting = this.limiter.acquire();
    if (waiting) await waiting;
    try {
      this.assertUsable();
      return (await this.send(method, params, options?.timeoutMs ?? this.options.callTimeoutMs)) as C[M][1];
    } finally {
      this.limiter.release();
    }
  }

  /** Stops the peer: pending calls fail with rpc_closed, the socket closes (and redialing stops). */
  close(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    this.state = 'closed';
    this.stopTicker();
    const conn = this.conn;
    if (conn !== undefined) this.detach(conn);
    this.failPending(rpcErrors.closed(), () => true);
    const waits = [this.stopConnecting()];
    if (conn !== undefined) waits.push(closeSocket(conn.socket, CloseCode.normal, 'closing'));
    this.closing = Promise.all(waits).then(() => { this.emit('closed'); });
    return this.closing;
  }

  /**
   * Takes over a socket whose hellos were exchanged (RpcServer, connectPeer).
   * Calls that waited for a connection are written now, in call order.
   */
  attach(socket: WebSocket, remote: PeerHello): void {
    if (this.state !== 'open') {
      socket.terminate();
      return;
    }
    assert(this.conn === undefined, 'a peer has one connection at a time');
    const conn = new Connection(socket, remote, Math.min(this.options.messageBytesMax, remote.messageBytesMax),
      createDecoder(this.options.messageBytesMax), this.onFlushed);
    this.conn = conn;
    this.remoteHello = remote;
    const markHeard = (): void => { conn.heard = true; };
    socket.on('message', (data: RawData, isBinary: boolean) => this.receive(conn, data, isBinary));
    socket.on('pong', markHeard);
    socket.on('ping', markHeard);
    socket.on('error', (err: Error) => {
      if (this.conn === conn) this.options.logger.warn({ peer: remote.name, err }, 'rpc connection error; closing it');
    });
    socket.on('close', (code: number, reason: Buffer) => {
      if (this.conn !== conn) return;
      // A close the other side meant (shutdown, restart) is worth an info line; anything else a warning.
      const meant = code === CloseCode.normal || code === CloseCode.goingAway;
      this.lose(conn, `connection closed (${code}${reason.length > 0 ? ` ${reason.toString()}` : ''})`, meant);
    });
    // Not unref'd: the socket keeps the process alive anyway, and a leaked heartbeat then shows in tests.
    conn.heartbeat = setInterval(() => this.heartbeat(conn), this.options.heartbeatIntervalMs);
    for (const call of this.pending.values()) {
      if (call.frame !== undefined) this.writeCall(conn, call);
    }
    this.emit('connected', remote);
  }

  /** Called after a loss when `redials` (connectPeer schedules the next dial). */
  protected onLost(): void {
    // An accepted peer does not come back: the node dials again and is a new peer.
  }

  /** Called by close(): stop dialing and wait for a dial in progress to end. */
  protected stopConnecting(): Promise<void> {
    return Promise.resolve();
  }

  private assertUsable(): void {
    if (this.state === 'closed') throw rpcErrors.closed();
    if (this.state === 'lost') throw this.lostError ?? rpcErrors.unavailable('lost');
  }

  private send(method: string, params: unknown, timeoutMs: number): Promise<unknown> {
    const hasDeadline = timeoutMs > 0 && Number.isFinite(timeoutMs);
    let id = this.nextCallId = (this.nextCallId + 1) >>> 0;
    while (this.pending.has(id)) id = this.nextCallId = (this.nextCallId + 1) >>> 0;
    let frame: Uint8Array;
    try {
      frame = encodeCall(id, method, params, hasDeadline ? timeoutMs : 0);
    } catch {
      throw rpcErrors.unencodable(method);
    }
    const bytesMax = this.conn?.sendBytesMax ?? this.options.messageBytesMax;
    if (frame.byteLength > bytesMax) throw rpcErrors.callTooLarge(method, frame.byteLength, bytesMax);
    return new Promise((resolve, reject) => {
      const call: PendingCall = { id, method, timeoutMs, deadline: hasDeadline ? Date.now() + timeoutMs : Infinity, frame, resolve, reject };
      this.pending.set(id, call);
      if (hasDeadline) this.startTicker();
      if (this.conn !== undefined) this.writeCall(this.conn, call);
    });
  }

  private writeCall(conn: Connection, call: PendingCall): void {
    const frame = call.frame!;
    if (frame.byteLength > conn.sendBytesMax) {
      // The other side announced a smaller limit than ours: fail this call, keep the connection.
      this.pending.delete(call.id);
      call.reject(rpcErrors.callTooLarge(call.method, frame.byteLength, conn.sendBytesMax));
      return;
    }
    if (conn.blocked) {
      conn.outbox.push(call);
      return;
    }
    call.frame = undefined;
    this.write(conn, frame);
  }

  private enqueueFrame(conn: Connection, frame: Uint8Array): void {
    if (conn.blocked) conn.outbox.push(frame);
    else this.write(conn, frame);
  }

  /**
   * Backpressure without a callback per frame: the frame that takes the
   * socket's unsent bytes past the bound is written with `onFlushed`, and
   * everything after it waits in the outbox until that callback runs (by
   * then the socket has handed all of it to the kernel).
   */
  private write(conn: Connection, frame: Uint8Array): void {
    const socket = conn.socket;
    conn.batchWrites();
    if (socket.bufferedAmount + frame.byteLength > this.options.sendBufferBytesMax) {
      conn.blocked = true;
      socket.send(frame, conn.onFlushed);
    } else {
      socket.send(frame);
    }
  }

  private flushOutbox(conn: Connection): void {
    if (this.conn !== conn) return;
    conn.blocked = false;
    while (!conn.blocked && conn.outbox.length > 0) {
      const item = conn.outbox.shift()!;
      if (item instanceof Uint8Array) {
        this.write(conn, item);
      } else if (this.pending.get(item.id) === item && item.frame !== undefined) {
        const frame = item.frame;
        item.frame = undefined;
        this.write(conn, frame);
      }
    }
  }

  private receive(conn: Connection, data: RawData, isBinary: boolean): void {
    if (this.conn !== conn) return;
    conn.heard = true;
    if (!isBinary) {
      this.violation(conn, 'text frame', CloseCode.invalidData);
      return;
    }
    let message;
    try {
      message = decodeMessage(conn.decoder, data as Buffer);
    } catch (err) {
      // Never let a frame's content throw out of the socket's event handler (that would end the process).
      this.violation(conn, err instanceof ProtocolViolation ? err.message : 'invalid message', CloseCode.invalidData);
      return;
    }
    switch (message.kind) {
      case MessageKind.call:
        this.serveCall(conn, message.id, message.method, message.params, message.timeoutMs);
        return;
      case MessageKind.result: {
        const call = this.pending.get(message.id);
        if (call === undefined) return; // already failed by its deadline
        this.pending.delete(message.id);
        call.resolve(message.value);
        return;
      }
      case MessageKind.error: {
        const call = this.pending.get(message.id);
        if (call === undefined) return;
        this.pending.delete(message.id);
        call.reject(new TesseraError(message.code, message.status, message.message,
          message.details === undefined ? undefined : { details: message.details }));
        return;
      }
      case MessageKind.hello:
        this.violation(conn, 'hello after the handshake', CloseCode.protocolError);
    }
  }

  private serveCall(conn: Connection, id: number, method: string, params: unknown, timeoutMs: number): void {
    const handler = this.handler;
    if (handler === undefined) {
      this.enqueueFrame(conn, encodeError(id, rpcErrors.unknownMethod(method)));
    } else if (this.servingCount >= this.options.servingMax) {
      this.enqueueFrame(conn, encodeError(id, rpcErrors.overloaded(this.options.servingMax, 0)));
    } else {
      this.servingCount++;
      void this.runHandler(conn, handler, id, method, params, timeoutMs);
    }
  }

  /** One async frame per served call rather than a pair of then() closures. */
  private async runHandler(conn: Connection, handler: RpcHandler, id: number, method: string, params: unknown, timeoutMs: number): Promise<void> {
    const startedAt = timeoutMs > 0 ? Date.now() : 0;
    let frame: Uint8Array;
    try {
      const value = await handler(method, params);
      if (timeoutMs > 0 && Date.now() - startedAt > timeoutMs) {
        // The caller has given up: a short error instead of a possibly large value.
        frame = encodeError(id, rpcErrors.timeout(method, timeoutMs));
      } else {
        frame = this.encodeReply(conn, id, method, value);
      }
    } catch (err) {
      frame = errorFrame(id, this.wireError(err, method));
    } finally {
      this.servingCount--;
    }
    if (this.conn === conn) this.enqueueFrame(conn, frame);
  }

  private encodeReply(conn: Connection, id: number, method: string, value: unknown): Uint8Array {
    let frame: Uint8Array;
    try {
      frame = encodeResult(id, value);
    } catch (err) {
      this.options.logger.error({ peer: conn.remote.name, method, err }, 'rpc reply cannot be encoded');
      return encodeError(id, rpcErrors.unencodable(method));
    }
    if (frame.byteLength <= conn.sendBytesMax) return frame;
    this.options.logger.warn({ peer: conn.remote.name, method, bytes: frame.byteLength, bytesMax: conn.sendBytesMax }, 'rpc reply over the message limit');
    return encodeError(id, rpcErrors.replyTooLarge(method, frame.byteLength, conn.sendBytesMax));
  }

  /** A TesseraError crosses intact; anything else is logged here and crosses as a plain 500. */
  private wireError(err: unknown, method: string): TesseraError {
    if (!(err instanceof TesseraError) && !isErrorShape(err)) {
      this.options.logger.error({ peer: this.remoteHello?.name, method, err }, 'rpc handler failed');
    }
    return toTesseraError(err);
  }

  private heartbeat(conn: Connection): void {
    const now = Date.now();
    if (conn.heard) {
      conn.heard = false;
      conn.lastHeardAt = now;
    } else if (now - conn.lastHeardAt >= this.options.heartbeatTimeoutMs) {
      this.lose(conn, `no heartbeat for ${now - conn.lastHeardAt} ms`);
      return;
    }
    conn.socket.ping();
  }

  private violation(conn: Connection, reason: string, code: number): void {
    this.options.logger.warn({ peer: conn.remote.name, reason }, 'rpc protocol violation; closing the connection');
    conn.socket.close(code, reason.slice(0, 120));
    this.lose(conn, `protocol violation: ${reason}`);
  }

  /** The connection is gone (not by close()): fail what was sent, tell the listeners. */
  private lose(conn: Connection, reason: string, closedByPeer = false): void {
    if (this.conn !== conn) return;
    this.detach(conn);
    if (conn.socket.readyState !== conn.socket.CLOSED && conn.socket.readyState !== conn.socket.CLOSING) conn.socket.terminate();
    const err = rpcErrors.unavailable(reason);
    if (closedByPeer) this.options.logger.info({ peer: conn.remote.name, reason }, 'rpc peer closed the connection');
    else this.options.logger.warn({ peer: conn.remote.name, reason }, 'rpc peer lost');
    if (this.redials) {
      // Calls never written wait for the next connection (up to their deadline).
      this.failPending(err, (call) => call.frame === undefined);
    } else {
      this.state = 'lost';
      this.lostError = err;
      this.stopTicker();
      this.failPending(err, () => true);
    }
    this.emit('lost', err);
    if (this.redials && this.state === 'open') this.onLost();
  }

  private detach(conn: Connection): void {
    if (this.conn !== conn) return;
    this.conn = undefined;
    clearInterval(conn.heartbeat);
    conn.heartbeat = undefined;
    conn.outbox.drain();
  }

  private failPending(err: TesseraError, which: (call: PendingCall) => boolean): void {
    for (const call of this.pending.values()) {
      if (!which(call)) continue;
      this.pending.delete(call.id);
      call.reject(err);
    }
  }

  /** Deadlines are checked by one coarse ticker per peer, as in the in-process transport. */
  private startTicker(): void {
    this.idleTicks = 0;
    if (this.ticker !== undefined) return;
    this.ticker = setInterval(() => this.tick(), DEADLINE_TICK_MS);
    this.ticker.unref();
  }

  private stopTicker(): void {
    if (this.ticker !== undefined) clearInterval(this.ticker);
    this.ticker = undefined;
  }

  private tick(): void {
    if (this.pending.size === 0) {
      if (++this.idleTicks >= IDLE_TICKS_MAX) this.stopTicker();
      return;
    }
    this.idleTicks = 0;
    const now = Date.now();
    for (const call of this.pending.values()) {
      if (call.deadline > now) continue;
      this.pending.delete(call.id);
      call.reject(rpcErrors.timeout(call.method, call.timeoutMs));
    }
  }
}

/** Close handshake, bounded by the socket's closeTimeout; resolves once the socket is closed. */
export function closeSocket(socket: WebSocket, code: number, reason: string): Promise<void> {
  if (socket.readyState === socket.CLOSED) return Promise.resolve();
  return new Promise((resolve) => {
    socket.once('close', () => resolve());
    if (socket.readyState === socket.CONNECTING) socket.terminate();
    else if (socket.readyState === socket.OPEN) socket.close(code, reason);
  });
}

/** An error's details are the one part that might not encode; without them it always does. */
function errorFrame(id: number, err: TesseraError): Uint8Array {
  try {
    return encodeError(id, err);
  } catch {
    return encodeError(id, new TesseraError(err.code, err.status, err.message));
  }
}
