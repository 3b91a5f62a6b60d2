/**
 * The WebSocket RPC wire format: one MessagePack array per binary frame, its
 * first element the message kind. Arrays rather than maps because a small
 * call is mostly envelope: `[1, 7, "doc.get", {…}, 30000]` is 13 bytes of
 * envelope where a map with key names would be about 40, and decoding an
 * array allocates no key strings.
 *
 *   call    [1, id, method, params, timeoutMs]     timeoutMs 0: no deadline
 *   result  [2, id, value]
 *   error   [3, id, code, status, message, details?]
 *   hello   [4, {name, role, protocol, messageBytesMax, info?, clusterSecret?}]
 *
 * Each side numbers its own calls; a result or error answers the receiver's
 * call with that id, so both sides can call each other on one connection.
 */
import { Decoder } from '@msgpack/msgpack';
import { packMessagePack } from '@tessera/documents';
import type { TesseraError } from '@tessera/errors';

export const MessageKind = { call: 1, result: 2, error: 3, hello: 4 } as const;

/** WebSocket close codes used (RFC 6455 §7.4.1; 1013: try again later). */
export const CloseCode = {
  normal: 1000, goingAway: 1001, protocolError: 1002, invalidData: 1007, policy: 1008, tooBig: 1009, tryAgainLater: 1013,
  /** Application range (4000–4999): the joining side's hello lacks the cluster secret, or has another one. */
  clusterSecretRefused: 4401,
} as const;

/** Bumped when the wire format changes; a peer with another version is refused. */
export const RPC_PROTOCOL_VERSION = 1;

/** Who is at the other end of a connection: sent by both sides before anything else. */
export interface PeerHello {
  /** Stable name of the process (a node's name, `coordinator`). */
  name: string;
  /** `node`, `coordinator`, … */
  role: string;
  protocol: number;
  /** The largest message this side accepts; the other side never sends more. */
  messageBytesMax: number;
  /** Anything else the joining side announces (data dir, version…). */
  info?: Record<string, unknown>;
  /**
   * The cluster secret, sent by the joining side only (RpcServerOptions.clusterSecret).
   * The accepting side checks it and removes it before anything else sees the hello: it is never logged.
   */
  clusterSecret?: string;
}

/** Longest cluster secret a hello may carry. */
export const CLUSTER_SECRET_CHARS_MAX = 1024;

/**
 * Most bytes a connection may send before its hello is in (the hello
 * included): far more than a hello takes (names, a node's announcement, the
 * secret), far less than a frame of messageBytesMax, which a connection
 * that has not shown the cluster secret yet must not make the server hold.
 */
export const HELLO_BYTES_MAX = 64 * 1024;

/** What the user of a peer says about itself; protocol and limits are added. */
export type PeerIdentity = Pick<PeerHello, 'name' | 'role' | 'info'>;

export type Message =
  | { kind: typeof MessageKind.call; id: number; method: string; params: unknown; timeoutMs: number }
  | { kind: typeof MessageKind.result; id: number; value: unknown }
  | { kind: typeof MessageKind.error; id: number; code: string; status: number; message: string; details: Record<string, unknown> | undefined }
  | { kind: typeof MessageKind.hello; hello: PeerHello };

/** A frame that is not a message of this protocol: the connection is closed. */
export class ProtocolViolation extends Error {
  override readonly name = 'ProtocolViolation';
}

const NAME_CHARS_MAX = 256;

/**
 * Frames are encoded with msgpackr (@tessera/documents `packMessagePack`:
 * 3.7× faster on a search reply, the same bytes) and decoded with
 * @msgpack/msgpack, whose bounds refuse a hostile frame before anything is
 * allocated for it. Object keys whose value is undefined are left out, as
 * JSON does: an optional field (`body?`) must arrive absent, not null, for
 * code that checks `=== undefined` to behave as it does over the in-process
 * transport. A frame is a slice of the encoder's buffer that later encodes
 * never write over: it may wait in a socket or outbox queue as it is.
 */
function encode(message: unknown[]): Uint8Array {
  return packMessagePack(message);
}

export function encodeCall(id: number, method: string, params: unknown, timeoutMs: number): Uint8Array {
  return encode([MessageKind.call, id, method, params, timeoutMs]);
}

export function encodeResult(id: number, value: unknown): Uint8Array {
  return encode([MessageKind.result, id, value]);
}

export function encodeError(id: number, err: TesseraError): Uint8Array {
  return err.details === undefined
    ? encode([MessageKind.error, id, err.code, err.status, err.message])
    : encode([MessageKind.error, id, err.code, err.status, err.message, err.details]);
}

export function encodeHello(hello: PeerHello): Uint8Array {
  return encode([MessageKind.hello, hello]);
}

/**
 * One decoder per connection side, bounded by the message limit: no string,
 * binary, array or map in a frame can be longer than the frame, so a header
 * claiming more is garbage and fails before anything is allocated for it.
 */
export function createDecoder(messageBytesMax: number): Decoder {
  const max = Math.min(messageBytesMax, 0xffff_ffff);
  return new Decoder({ maxStrLength: max, maxBinLength: max, maxArrayLength: max, maxMapLength: max, maxExtLength: max });
}

function isId(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/** Decode and validate one frame. Throws ProtocolViolation for anything else. */
export function decodeMessage(decoder: Decoder, frame: Uint8Array): Message {
  let raw: unknown;
  try {
    raw = decoder.decode(frame);
  } catch (err) {
    throw new ProtocolViolation(`undecodable frame (${err instanceof Error ? err.message : 'MessagePack error'})`);
  }
  if (!Array.isArray(raw) || raw.length < 2) throw new ProtocolViolation('frame is not a message array');
  const kind: unknown = raw[0];
  if (kind === MessageKind.hello) return { kind, hello: validateHello(raw[1]) };
  const id: unknown = raw[1];
  if (!isId(id)) throw new ProtocolViolation('message without a valid id');
  switch (kind) {
    case MessageKind.call: {
      const method: unknown = raw[2];
      const timeoutMs: unknown = raw[4];
      if (typeof method !== 'string' || method.length > NAME_CHARS_MAX) throw new ProtocolViolation('call without a valid method');
      if (typeof timeoutMs !== 'number' || !(timeoutMs >= 0)) throw new ProtocolViolation('call without a valid timeout');
      return { kind, id, method, params: raw[3], timeoutMs };
    }
    case MessageKind.result:
      return { kind, id, value: raw[2] };
    case MessageKind.error: {
      const [, , code, status, message, details] = raw as unknown[];
      if (typeof code !== 'string' || typeof message !== 'string' || typeof status !== 'number'
        || !Number.isInteger(status) || status < 400 || status > 599) throw new ProtocolViolation('malformed error message');
      const detailsObject = details !== null && typeof details === 'object' && !Array.isArray(details)
        ? details as Record<string, unknown> : undefined;
      return { kind, id, code, status, message, details: detailsObject };
    }
    default:
      throw new ProtocolViolation(`unknown message kind ${String(kind)}`);
  }
}

function validateHello(value: unknown): PeerHello {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ProtocolViolation('malformed hello');
  const v = value as Record<string, unknown>;
  if (typeof v.name !== 'string' || v.name.length === 0 || v.name.length > NAME_CHARS_MAX) throw new ProtocolViolation('hello without a valid name');
  if (typeof v.role !== 'string' || v.role.length > NAME_CHARS_MAX) throw new ProtocolViolation('hello without a valid role');
  if (typeof v.protocol !== 'number') throw new ProtocolViolation('hello without a protocol version');
  if (typeof v.messageBytesMax !== 'number' || !Number.isInteger(v.messageBytesMax) || v.messageBytesMax < 1024) {
    throw new ProtocolViolation('hello without a valid message limit');
  }
  const hello: PeerHello = { name: v.name, role: v.role, protocol: v.protocol, messageBytesMax: v.messageBytesMax };
  if (v.info !== null && typeof v.info === 'object' && !Array.isArray(v.info)) hello.info = v.info as Record<string, unknown>;
  if (typeof v.clusterSecret === 'string' && v.clusterSecret.length <= CLUSTER_SECRET_CHARS_MAX) hello.clusterSecret = v.clusterSecret;
  return hello;
}
