/**
 * LevelDB key spaces of one shard copy. Every key starts with one prefix byte
 * naming its space, so each space is one contiguous key range (a range scan or
 * a range delete never crosses into another):
 *
 * | prefix | space      | key after the prefix               | value                                     |
 * |--------|------------|------------------------------------|-------------------------------------------|
 * | 0x00   | metadata   | name (ASCII)                       | msgpack (format, counters), JSON (schema) |
 * | 0x01   | documents  | type-tagged document ID            | msgpack document record                   |
 * | 0x02   | docids     | #docid, uint32 big-endian          | type-tagged document ID                   |
 * | 0x03   | oplog      | seq, uint64 big-endian             | msgpack oplog entry                       |
 * | 0x10-  | (reserved for the search engine: schema, postings, values, segments, manifest) |
 *
 * Document IDs are type-tagged (`n` + sortable float64 for numbers, `s` +
 * UTF-8 for strings) so numeric 1 and string "1" are different documents, and
 * numeric IDs iterate in numeric order. Big-endian integers make docid and seq
 * order the key order.
 */
import assert from 'node:assert/strict';
import type { DocumentId } from '../documents/types.js';

export const PREFIX_META = 0x00;
export const PREFIX_DOCUMENTS = 0x01;
export const PREFIX_DOCIDS = 0x02;
export const PREFIX_OPLOG = 0x03;

/**
 * Largest #docid a shard assigns. Postings iterators end at the sentinel
 * NO_MORE_DOCS = 0x7fffffff (STYLE §8) and docids live in Uint32Arrays and
 * int32 arithmetic, so a real docid must stay below it.
 */
export const DOCID_MAX = 0x7ffffffe;

const TAG_NUMBER = 0x6e; // 'n'
const TAG_STRING = 0x73; // 's'

export const META_FORMAT = metaKey('format');
export const META_COUNTERS = metaKey('counters');
/**
 * The index schema the shard last indexed with: what crash replay re-indexes
 * with. This key holds a base (the whole schema's JSON); the deltas under
 * META_SCHEMA_DELTA, applied in order, bring it to the last schema
 * (store/stored-schema.ts).
 */
export const META_SCHEMA = metaKey('schema');
/** Prefix of the schema deltas: then the delta's number (1, 2, ...), uint32 big-endian, so a range read returns them in order. */
export const META_SCHEMA_DELTA = metaKey('schema-delta/');
/** The copy's replication position (msgpack: term, checkpointTerm, checkpoint; replication/position.ts). */
export const META_REPLICATION = metaKey('replication');
/** The copy's random ID in the node's commit log (store/commit-log.ts): a copy re-created in the same directory gets a new one. */
export const META_COMMIT_LOG_TOKEN = metaKey('commit-log-token');

function metaKey(name: string): Buffer {
  return Buffer.concat([Buffer.of(PREFIX_META), Buffer.from(name, 'latin1')]);
}

export function schemaDeltaKey(n: number): Buffer {
  assert.ok(Number.isInteger(n) && n >= 1 && n <= 0xffffffff, 'schema delta number out of range');
  const out = Buffer.allocUnsafe(META_SCHEMA_DELTA.length + 4);
  META_SCHEMA_DELTA.copy(out);
  out.writeUInt32BE(n, META_SCHEMA_DELTA.length);
  return out;
}

/** The number of a schema delta key. */
export function schemaDeltaNumber(key: Uint8Array): number {
  assert.ok(key.length === META_SCHEMA_DELTA.length + 4 && Buffer.from(key.buffer, key.byteOffset, META_SCHEMA_DELTA.length).equals(META_SCHEMA_DELTA),
    'not a schema delta key');
  return Buffer.from(key.buffer, key.byteOffset, key.length).readUInt32BE(META_SCHEMA_DELTA.length);
}

/** Every schema delta key: `{ gte, lt }` (the prefix's last byte, '/', plus one ends it). */
export function schemaDeltaRange(): { gte: Buffer; lt: Buffer } {
  const lt = Buffer.from(META_SCHEMA_DELTA);
  lt[lt.length - 1]++;
  return { gte: META_SCHEMA_DELTA, lt };
}

/** The whole key range of one space: `{ gte, lt }`. */
export function spaceRange(prefix: number): { gte: Buffer; lt: Buffer } {
  return { gte: Buffer.of(prefix), lt: Buffer.of(prefix + 1) };
}

/** Type-tagged ID bytes (the part after the prefix of a document key; the value of a docid key). */
export function encodeIdTag(id: DocumentId): Buffer {
  if (typeof id === 'number') {
    const out = Buffer.allocUnsafe(9);
    out[0] = TAG_NUMBER;
    writeSortableDouble(out, 1, id);
    return out;
  }
  const bytes = Buffer.from(id, 'utf8');
  const out = Buffer.allocUnsafe(bytes.length + 1);
  out[0] = TAG_STRING;
  bytes.copy(out, 1);
  return out;
}

export function decodeIdTag(bytes: Uint8Array, offset = 0): DocumentId {
  const tag = bytes[offset];
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset + offset + 1, bytes.length - offset - 1);
  if (tag === TAG_NUMBER) {
    assert.equal(buf.length, 8, 'numeric document ID key must hold 8 bytes');
    return readSortableDouble(buf, 0);
  }
  assert.equal(tag, TAG_STRING, 'document ID key has an unknown type tag');
  return buf.toString('utf8');
}

export function documentKey(id: DocumentId): Buffer {
  const tag = encodeIdTag(id);
  const out = Buffer.allocUnsafe(tag.length + 1);
  out[0] = PREFIX_DOCUMENTS;
  tag.copy(out, 1);
  return out;
}

export function docidKey(docid: number): Buffer {
  assert.ok(Number.isInteger(docid) && docid >= 1 && docid <= DOCID_MAX, 'docid out of range');
  const out = Buffer.allocUnsafe(5);
  out[0] = PREFIX_DOCIDS;
  out.writeUInt32BE(docid, 1);
  return out;
}

export function oplogKey(seq: number): Buffer {
  assert.ok(Number.isSafeInteger(seq) && seq >= 0, 'seq out of range');
  const out = Buffer.allocUnsafe(9);
  out[0] = PREFIX_OPLOG;
  out.writeBigUInt64BE(BigInt(seq), 1);
  return out;
}

export function oplogKeySeq(key: Uint8Array): number {
  assert.ok(key.length === 9 && key[0] === PREFIX_OPLOG, 'not an oplog key');
  const seq = Buffer.from(key.buffer, key.byteOffset, key.length).readBigUInt64BE(1);
  return Number(seq);
}

/**
 * IEEE 754 doubles made byte-comparable: positives get the sign bit set,
 * negatives have every bit flipped, so the unsigned byte order is the numeric
 * order. -0 is stored as 0 (one key per number).
 */
function writeSortableDouble(buf: Buffer, offset: number, value: number): void {
  buf.writeDoubleBE(value === 0 ? 0 : value, offset);
  if ((buf[offset] & 0x80) === 0) {
    buf[offset] = buf[offset] | 0x80;
  } else {
    for (let i = offset; i < offset + 8; i++) buf[i] = ~buf[i] & 0xff;
  }
}

function readSortableDouble(buf: Buffer, offset: number): number {
  const copy = Buffer.from(buf.subarray(offset, offset + 8));
  if ((copy[0] & 0x80) !== 0) {
    copy[0] = copy[0] & 0x7f;
  } else {
    for (let i = 0; i < 8; i++) copy[i] = ~copy[i] & 0xff;
  }
  return copy.readDoubleBE(0);
}
