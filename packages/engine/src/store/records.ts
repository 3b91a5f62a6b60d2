/**
 * msgpack values stored in LevelDB: document records, oplog entries (both
 * framed with their CRC-32, see `checked`), the shard counters and the
 * replication position. Asserted before writing and after reading (a malformed
 * record is a bug or a corruption, never user input).
 *
 * A change stores its body twice — in the document record and in its oplog
 * entry — so the body is encoded once, when the write is decided
 * (`encodeBody`), and spliced into both records: each record is its small
 * fixed fields encoded as a msgpack map with one entry less, then the map
 * header is bumped by one and `body` appended. Same bytes as encoding the
 * whole object, one body encoding instead of two.
 */
import assert from 'node:assert/strict';
import { crc32 } from 'node:zlib';
import { Decoder } from '@msgpack/msgpack';
import { packMessagePack as pack } from '@tessera/documents';
import { isPlainObject } from '../documents/plain-object.js';
import { engineErrors } from '../errors.js';
import type { ContentLink, DocumentBody, DocumentId, OplogEntry, StoredDocument } from '../documents/types.js';
import type { ReplicationState } from '../replication/position.js';

/** Records are encoded with msgpackr (`pack`: @tessera/documents `packMessagePack`, why and its buffer), decoded with @msgpack/msgpack. */
const decoder = new Decoder();

const KEY_BODY = pack('body');
/** msgpack fixmap header bytes: 0x80 | entries, for 0–15 entries. */
const FIXMAP = 0x80;
const FIXMAP_LAST = 0x8f;

export interface ShardCounters {
  /** Highest #docid ever assigned. */
  lastDocid: number;
  /** Last sequence number assigned. */
  seq: number;
  /** Live documents. */
  documents: number;
  /** Largest numeric document ID ever written (0 when none). */
  maxNumericId: number;
}

/** Current on-disk format; checked at open. */
export const SHARD_FORMAT = 1;

export function encodeBody(body: DocumentBody): Uint8Array {
  return pack(body);
}

/**
 * A version's origin (replication/origin.ts) is stored only where it is not
 * the default — term 1, and the record's own seq — so a copy that never saw
 * replication keeps its records as they were.
 */
interface OriginFields {
  term?: number | undefined;
  originSeq?: number | undefined;
}

function addOrigin(head: Record<string, unknown>, origin: OriginFields, seq: number): void {
  if (origin.term !== undefined && origin.term !== 1) {
    assertPositive(origin.term, 'term');
    head.term = origin.term;
  }
  if (origin.originSeq !== undefined && origin.originSeq !== seq) {
    assertPositive(origin.originSeq, 'originSeq');
    head.originSeq = origin.originSeq;
  }
}

function readOrigin(value: Record<string, unknown>, into: OriginFields): void {
  if (value.term !== undefined) {
    assertPositive(value.term, 'term');
    into.term = value.term;
  }
  if (value.originSeq !== undefined) {
    assertPositive(value.originSeq, 'originSeq');
    into.originSeq = value.originSeq;
  }
}

/** Content entries are stored only when there are some: a record without content keeps its old bytes. */
function addContent(head: Record<string, unknown>, content: readonly ContentLink[] | undefined): void {
  if (content === undefined || content.length === 0) return;
  head.content = content.map((link) => [link.type, link.volume, link.offset, link.size, link.crc]);
}

/** The indexed form is stored only when it differs from the body (`_store: false` fields). */
function addIndexed(head: Record<string, unknown>, indexed: DocumentBody | undefined): void {
  if (indexed !== undefined) head.indexed = indexed;
}

function readIndexed(value: Record<string, unknown>, into: { indexed?: DocumentBody }): void {
  if (value.indexed === undefined) return;
  assert.ok(isPlainObject(value.indexed), 'an indexed form must be a map');
  into.indexed = value.indexed;
}

function readContent(value: Record<string, unknown>, into: { content?: readonly ContentLink[] }): void {
  if (value.content === undefined) return;
  assert.ok(Array.isArray(value.content), 'content entries must be an array');
  into.content = value.content.map((entry: unknown) => {
    assert.ok(Array.isArray(entry) && entry.length === 5, 'a content entry is [type, volume, offset, size, crc]');
    const [type, volume, offset, size, crc] = entry as unknown[];
    assert.ok(typeof type === 'string', 'content entry type');
    for (const n of [volume, offset, size, crc]) assert.ok(Number.isSafeInteger(n) && (n as number) >= 0, 'content entry location');
    return { type, volume: volume as number, offset: offset as number, size: size as number, crc: crc as number };
  });
}

/**
 * Document records and oplog entries are framed with their CRC-32:
 * `0xc1 | crc32 (u32 BE) | msgpack`. LevelDB (as classic-level opens it) does
 * not verify its blocks' checksums, so without this a flipped bit in a table
 * was served as the document (scripts/chaos/scenarios/r12-flipped-byte.mjs).
 * 0xc1 is the one byte msgpack never uses, so records written before the
 * frame (a bare msgpack map) are still read, unchecked.
 */
const CHECKED = 0xc1;
const CHECKED_HEADER_BYTES = 5;

function checked(record: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(CHECKED_HEADER_BYTES + record.length);
  out[0] = CHECKED;
  out.writeUInt32BE(crc32(record), 1);
  out.set(record, CHECKED_HEADER_BYTES);
  return out;
}

/** The msgpack of a record, its checksum verified when it has one. */
function unchecked(bytes: Uint8Array, what: string): Uint8Array {
  if (bytes[0] !== CHECKED) return bytes;
  assert.ok(bytes.length >= CHECKED_HEADER_BYTES, `${what} is truncated`);
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const record = view.subarray(CHECKED_HEADER_BYTES);
  if (crc32(record) !== view.readUInt32BE(1)) throw engineErrors.storeCorrupted(`a ${what} (in the shard's LevelDB tables)`, 'checksum mismatch');
  return record;
}

export function encodeDocumentRecord(doc: {
  id: DocumentId; docid: number; version: number; seq: number; content?: readonly ContentLink[] | undefined; indexed?: DocumentBody | undefined;
} & OriginFields,
  body: Uint8Array): Buffer {
  assertPositive(doc.docid, 'docid');
  assertPositive(doc.version, 'version');
  assertPositive(doc.seq, 'seq');
  const head: Record<string, unknown> = { id: doc.id, docid: doc.docid, version: doc.version, seq: doc.seq };
  addOrigin(head, doc, doc.seq);
  addContent(head, doc.content);
  addIndexed(head, doc.indexed);
  return checked(withBody(pack(head), body));
}

export function decodeDocumentRecord(bytes: Uint8Array): StoredDocument {
  const value: unknown = decoder.decode(unchecked(bytes, 'document record'));
  assert.ok(isPlainObject(value), 'document record must be a map');
  const { id, docid, version, seq, body } = value;
  assert.ok(typeof id === 'string' || typeof id === 'number', 'document record id');
  assertPositive(docid, 'docid');
  assertPositive(version, 'version');
  assertPositive(seq, 'seq');
  assert.ok(isPlainObject(body), 'document record body must be a map');
  const doc: { -readonly [K in keyof StoredDocument]: StoredDocument[K] } = { id, docid, version, seq, body };
  readOrigin(value, doc);
  readContent(value, doc);
  readIndexed(value, doc);
  return doc;
}

export function encodeOplogEntry(entry: Omit<OplogEntry, 'body'>, body: Uint8Array | undefined): Buffer {
  assertPositive(entry.seq, 'seq');
  assertPositive(entry.docid, 'docid');
  assertPositive(entry.version, 'version');
  assert.equal(entry.op === 'put', body !== undefined, 'an oplog put carries a body, a delete none');
  const head: Record<string, unknown> = { seq: entry.seq, id: entry.id, docid: entry.docid, version: entry.version, op: entry.op };
  addOrigin(head, entry, entry.seq);
  addContent(head, entry.content);
  addIndexed(head, entry.indexed);
  return checked(body === undefined ? pack(head) : withBody(pack(head), body));
}

export function decodeOplogEntry(bytes: Uint8Array): OplogEntry {
  const value: unknown = decoder.decode(unchecked(bytes, 'operation log entry'));
  assert.ok(isPlainObject(value), 'oplog entry must be a map');
  const { seq, id, docid, version, op, body } = value;
  assertPositive(seq, 'seq');
  assert.ok(typeof id === 'string' || typeof id === 'number', 'oplog entry id');
  assertPositive(docid, 'docid');
  assertPositive(version, 'version');
  let entry: OplogEntry;
  if (op === 'put') {
    assert.ok(isPlainObject(body), 'oplog put body must be a map');
    entry = { seq, id, docid, version, op, body };
  } else {
    assert.equal(op, 'delete', 'oplog entry op');
    entry = { seq, id, docid, version, op };
  }
  readOrigin(value, entry);
  readContent(value, entry);
  readIndexed(value, entry);
  return entry;
}

export function encodeReplicationState(state: ReplicationState): Buffer {
  return pack({ term: state.term, checkpointTerm: state.checkpointTerm, checkpoint: state.checkpoint });
}

export function decodeReplicationState(bytes: Uint8Array): ReplicationState {
  const value: unknown = decoder.decode(bytes);
  assert.ok(isPlainObject(value), 'replication state must be a map');
  const { term, checkpointTerm, checkpoint } = value;
  assertPositive(term, 'term');
  for (const [name, n] of [['checkpointTerm', checkpointTerm], ['checkpoint', checkpoint]] as const) {
    assert.ok(Number.isSafeInteger(n) && (n as number) >= 0, `replication ${name}`);
  }
  return { term, checkpointTerm: checkpointTerm as number, checkpoint: checkpoint as number };
}

export function encodeCounters(counters: ShardCounters): Buffer {
  return pack({
    lastDocid: counters.lastDocid, seq: counters.seq, documents: counters.documents, maxNumericId: counters.maxNumericId,
  });
}

export function decodeCounters(bytes: Uint8Array): ShardCounters {
  const value: unknown = decoder.decode(bytes);
  assert.ok(isPlainObject(value), 'counters must be a map');
  const { lastDocid, seq, documents, maxNumericId } = value;
  for (const [name, n] of [['lastDocid', lastDocid], ['seq', seq], ['documents', documents]] as const) {
    assert.ok(Number.isSafeInteger(n) && (n as number) >= 0, `counter ${name}`);
  }
  assert.ok(typeof maxNumericId === 'number' && Number.isFinite(maxNumericId), 'counter maxNumericId');
  return { lastDocid: lastDocid as number, seq: seq as number, documents: documents as number, maxNumericId };
}

export function encodeFormat(): Buffer {
  return pack(SHARD_FORMAT);
}

export function decodeFormat(bytes: Uint8Array): unknown {
  return decoder.decode(bytes);
}

/** `head` is a fixmap of n entries (in the encoder's shared buffer): copy it as a map of n + 1 with `body` last. */
function withBody(head: Uint8Array, body: Uint8Array): Buffer {
  assert.ok(head[0] >= FIXMAP && head[0] < FIXMAP_LAST, 'record head must be a fixmap with room for one more entry');
  const out = Buffer.allocUnsafe(head.length + KEY_BODY.length + body.length);
  out.set(head, 0);
  out[0] = head[0] + 1;
  out.set(KEY_BODY, head.length);
  out.set(body, head.length + KEY_BODY.length);
  return out;
}

function assertPositive(n: unknown, name: string): asserts n is number {
  assert.ok(Number.isSafeInteger(n) && (n as number) >= 1, `${name} must be a positive integer`);
}
