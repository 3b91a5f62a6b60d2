/**
 * The first message each way is a hello (name, role, protocol version,
 * message limit). Waiting for it is callback-driven, not a promise, on
 * purpose: ws delivers the frames of one TCP chunk synchronously, so the peer
 * must take over the socket in the same turn as the hello or the message
 * right behind it (often the other side's first call) would be missed.
 */
import type { RawData, WebSocket } from 'ws';
import { CloseCode, MessageKind, RPC_PROTOCOL_VERSION, createDecoder, decodeMessage, ProtocolViolation, type PeerHello } from './messages.js';

export interface HandshakeFailure {
  reason: string;
  /** Close code to send, or undefined when the socket is already gone. */
  closeCode: number | undefined;
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
  const onClose = (code: number): void => {
    finish();
    onFail({ reason: `connection closed (${code}) before the hello`, closeCode: undefined });
  };
  const timer = setTimeout(() => {
    finish();
    onFail({ reason: `no hello within ${timeoutMs} ms`, closeCode: CloseCode.policy });
  }, timeoutMs);
  socket.on('message', onMessage);
  socket.on('close', onClose);
}

export function ownHello(identity: { name: string; role: string; info?: Record<string, unknown> | undefined }, messageBytesMax: number): PeerHello {
  const hello: PeerHello = { name: identity.name, role: identity.role, protocol: RPC_PROTOCOL_VERSION, messageBytesMax };
  if (identity.info !== undefined) hello.info = identity.info;
  return hello;
}
