/**
 * Limits and timings of a WebSocket RPC peer, with their defaults
 * (docs/architecture.md, "RPC"). Every queue a peer keeps is bounded by one
 * of these.
 */
import assert from 'node:assert/strict';
import { RPC_CLIENT_DEFAULTS, type RpcClientOptions } from '../transport.js';

/** Structured logger; a pino Logger fits. */
export interface RpcLogger {
  debug(bindings: Record<string, unknown>, msg: string): void;
  info(bindings: Record<string, unknown>, msg: string): void;
  warn(bindings: Record<string, unknown>, msg: string): void;
  error(bindings: Record<string, unknown>, msg: string): void;
}

export interface RpcPeerOptions extends RpcClientOptions {
  /**
   * Largest message accepted (ws `maxPayload`) and, with the other side's
   * limit from its hello, sent: a larger call fails alone with 413 instead of
   * making the receiver close the connection.
   */
  messageBytesMax: number;
  /**
   * Bytes the socket may hold unsent before further frames wait in the
   * peer's outbox until it drains (bounded by the in-flight and serving limits).
   */
  sendBufferBytesMax: number;
  /** Incoming calls running at once; one more is answered 503 rpc_overloaded. */
  servingMax: number;
  /** A ping is sent this often. */
  heartbeatIntervalMs: number;
  /**
   * Nothing heard (no pong, no message) for this long → the peer is lost.
   * Must exceed the time to receive one `messageBytesMax` message, which
   * blocks the pongs behind it.
   */
  heartbeatTimeoutMs: number;
  /** close() waits this long for the closing handshake, then drops the socket. */
  closeTimeoutMs: number;
  logger: RpcLogger;
}

/** Logs one JSON line per event to stderr, pino's shape, when no logger is given. */
export const stderrLogger: RpcLogger = {
  debug: () => undefined,
  info: (bindings, msg) => writeLine(30, bindings, msg),
  warn: (bindings, msg) => writeLine(40, bindings, msg),
  error: (bindings, msg) => writeLine(50, bindings, msg),
};

function writeLine(level: number, bindings: Record<string, unknown>, msg: string): void {
  const line: Record<string, unknown> = { level, time: Date.now(), name: 'rpc', ...bindings, msg };
  if (line.err instanceof Error) line.err = { type: line.err.name, message: line.err.message };
  process.stderr.write(`${JSON.stringify(line)}\n`);
}

export const RPC_PEER_DEFAULTS: Readonly<RpcPeerOptions> = Object.freeze({
  ...RPC_CLIENT_DEFAULTS,
  messageBytesMax: 256 * 1024 * 1024,
  sendBufferBytesMax: 4 * 1024 * 1024,
  servingMax: 4096,
  heartbeatIntervalMs: 1000,
  heartbeatTimeoutMs: 5000,
  closeTimeoutMs: 1000,
  logger: stderrLogger,
});

export function peerOptions(options: Partial<RpcPeerOptions>): RpcPeerOptions {
  const merged = { ...RPC_PEER_DEFAULTS };
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined) (merged as Record<string, unknown>)[key] = value;
  }
  assert(merged.heartbeatTimeoutMs > merged.heartbeatIntervalMs,
    'heartbeatTimeoutMs must exceed heartbeatIntervalMs (pings must be missed before a peer counts as lost)');
  assert(merged.messageBytesMax >= 1024 && merged.messageBytesMax <= 0xffff_ffff, 'messageBytesMax must be within 1 KiB…4 GiB');
  assert(merged.servingMax >= 1 && merged.inFlightMax >= 1, 'servingMax and inFlightMax must be at least 1');
  return merged;
}
