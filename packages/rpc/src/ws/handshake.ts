/**
 * The first message each way is a hello (name, role, protocol version,
 * message limit). Waiting for it is callback-driven, not a promise, on
 * purpose: ws delivers the frames of one TCP chunk synchronously, so the peer
 * must take over the socket in the same turn as the hello or the message
 * right behind it (often the other side's first call) would be missed.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RawData, WebSocket } from 'ws';
import { CloseCode, MessageKind, RPC_PROTOCOL_VERSION, createDecoder, decodeMessage, ProtocolViolation, type PeerHello } from './messages.js';

export interface HandshakeFailure {
  reason: string;
  /** Close code to send, or undefined when the socket is already gone. */
  closeCode: number | undefined;
  /** The other side closed before its hello, with this code (its reason is in `reason`). */
  closedBy?: number;
}

export function awaitHello(
  socket: WebSocket,
  messageBytesMax: number,
  timeoutMs: number,
  onHello: (hello: PeerHello) => void,
  onFail: (failure: HandshakeFailure) => void,
): void {
  const finish = (): void => {
    clearTimeout(timer);
    socket.off('message', onMessage);
    socket.off('close', onClose);
  };
  const onMessage = (data: RawData, isBinary: boolean): void => {
    finish();
    let hello: PeerHello;
    try {
      if (!isBinary) throw new ProtocolViolation('text frame');
      const message = decodeMessage(createDecoder(messageBytesMax), data as Buffer);
      if (message.kind !== MessageKind.hello) throw new ProtocolViolation('first message is not a hello');
      hello = message.hello;
    } catch (err) {
      onFail({ reason: err instanceof ProtocolViolation ? err.message : 'invalid hello', closeCode: CloseCode.protocolError });
      return;
    }
    if (hello.protocol !== RPC_PROTOCOL_VERSION) {
      onFail({ reason: `protocol version ${hello.protocol}, expected ${RPC_PROTOCOL_VERSION}`, closeCode: CloseCode.protocolError });
      return;
    }
    onHello(hello);
  };
  const onClose = (code: number, why: Buffer): void => {
    finish();
    const text = why.toString('utf8');
    onFail({ reason: `connection closed (${code}${text === '' ? '' : `: ${text}`}) before the hello`, closeCode: undefined, closedBy: code });
  };
  const timer = setTimeout(() => {
    finish();
    onFail({ reason: `no hello within ${timeoutMs} ms`, closeCode: CloseCode.policy });
  }, timeoutMs);
  socket.on('message', onMessage);
  socket.on('close', onClose);
}

export function ownHello(identity: { name: string; role: string; info?: Record<string, unknown> | undefined }, messageBytesMax: number,
  clusterSecret?: string): PeerHello {
  const hello: PeerHello = { name: identity.name, role: identity.role, protocol: RPC_PROTOCOL_VERSION, messageBytesMax };
  if (identity.info !== undefined) hello.info = identity.info;
  if (clusterSecret !== undefined) hello.clusterSecret = clusterSecret;
  return hello;
}

/** SHA-256 of a cluster secret: digests of equal length, compared in constant time by clusterSecretRefusal. */
export function clusterSecretDigest(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/**
 * Why a joining peer's hello is refused under the cluster secret whose digest
 * is `expected` (undefined: no secret is required), or undefined when it is
 * admitted. Both sides are hashed first, so the comparison takes the same
 * time whatever the secret's length and wherever it differs.
 */
export function clusterSecretRefusal(expected: Buffer | undefined, hello: PeerHello): string | undefined {
  if (expected === undefined) return undefined;
  if (hello.clusterSecret === undefined) return 'this cluster requires a cluster secret (--cluster-secret) and none was given';
  if (!timingSafeEqual(expected, clusterSecretDigest(hello.clusterSecret))) return 'the cluster secret does not match the coordinator\'s';
  return undefined;
}
