/**
 * Segments in the shard's LevelDB database, and the manifest naming the live
 * ones. Key spaces (prefixes reserved for the engine in store/keys.ts):
 *
 * | prefix | key after the prefix               | value                                  |
 * |--------|------------------------------------|----------------------------------------|
 * | 0x10   | (none)                             | msgpack manifest                       |
 * | 0x11   | segment id u32 BE, chunk u32 BE    | ≤ SEGMENT_CHUNK_BYTES of segment bytes |
 *
 * A segment is written first (chunks, in batches), then published by
 * replacing the manifest with one put — atomic in LevelDB. A crash in between
 * leaves the old manifest valid and the new chunks orphaned; `open` deletes
 * chunks of segments the manifest doesn't name. Segments replaced by a merge
 * are deleted after the manifest that drops them is written.
 *
 * The manifest holds the op-log seq the segments cover (replay starts after
 * it), the next segment id and, per segment, its size and deletion bitset.
 */
import assert from 'node:assert/strict';
import { crc32 } from 'node:zlib';
import { decode, encode } from '@msgpack/msgpack';
import type { ClassicLevel } from 'classic-level';
import { engineErrors } from '../errors.js';
import { Bitset } from '../values/bitset.js';
import { SegmentReader } from './segment-reader.js';

export type SegmentDatabase = ClassicLevel<Buffer, Buffer>;

export const PREFIX_MANIFEST = 0x10;
export const PREFIX_SEGMENT_CHUNKS = 0x11;
/**
 * Bytes per segment chunk value. LevelDB handles values of a few MiB, but a
 * smaller value keeps one write (and one compaction input) bounded; 1 MiB
 * values read back at full disk speed with one getMany.
 */
export const SEGMENT_CHUNK_BYTES = 1024 * 1024;
/** Chunks per write batch: bounds a batch at 16 MiB in memory. */
const CHUNKS_PER_BATCH = 16;
export const MANIFEST_FORMAT = 1;
const MANIFEST_KEY = Buffer.of(PREFIX_MANIFEST);

export interface ManifestSegment {
  id: number;
  byteLength: number;
  docCount: number;
  /** Deletion bitset bytes (Bitset.toBytes), or null when nothing is deleted. */
  deleted: Uint8Array | null;
  /**
   * CRC-32 of the segment's bytes, checked when they are read back: LevelDB
   * (as classic-level opens it) does not verify its blocks' checksums, so a
   * flipped bit would reach the segment reader. Absent in manifests written
   * before it (those segments are read unchecked until merged away).
   */
  crc?: number;
}

export interface Manifest {
  format: number;
  /** Op-log seq the segments cover. */
  seq: number;
  nextSegmentId: number;
  segments: ManifestSegment[];
}

export function chunkKey(segmentId: number, chunk: number): Buffer {
  const key = Buffer.allocUnsafe(9);
  key[0] = PREFIX_SEGMENT_CHUNKS;
  key.writeUInt32BE(segmentId, 1);
  key.writeUInt32BE(chunk, 5);
  return key;
}

function segmentRange(segmentId: number): { gte: Buffer; lt: Buffer } {
  return { gte: chunkKey(segmentId, 0), lt: segmentId === 0xffffffff ? Buffer.of(PREFIX_SEGMENT_CHUNKS + 1) : chunkKey(segmentId + 1, 0) };
}

/** Write a segment's bytes as chunks; resolves with their CRC-32 (for its manifest entry). */
export async function writeSegmentChunks(db: SegmentDatabase, segmentId: number, bytes: Uint8Array): Promise<number> {
  const chunks = Math.ceil(bytes.length / SEGMENT_CHUNK_BYTES);
  for (let first = 0; first < chunks; first += CHUNKS_PER_BATCH) {
    const batch = db.batch();
    for (let c = first; c < Math.min(chunks, first + CHUNKS_PER_BATCH); c++) {
      const start = c * SEGMENT_CHUNK_BYTES;
      const chunk = bytes.subarray(start, Math.min(bytes.length, start + SEGMENT_CHUNK_BYTES));
      batch.put(chunkKey(segmentId, c), Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    }
    await batch.write();
  }
  return crc32(bytes);
}

/** Read a segment's bytes with one getMany into one 8-aligned buffer, checked against `crc` when given. */
export async function readSegmentBytes(db: SegmentDatabase, segmentId: number, byteLength: number, crc?: number): Promise<Uint8Array> {
  const chunks = Math.ceil(byteLength / SEGMENT_CHUNK_BYTES);
  const keys: Buffer[] = [];
  for (let c = 0; c < chunks; c++) keys.push(chunkKey(segmentId, c));
  const values = await db.getMany(keys);
  // A fresh ArrayBuffer starts at offset 0: every 8-aligned section stays aligned.
  const out = new Uint8Array(new ArrayBuffer(byteLength));
  let p = 0;
  for (let c = 0; c < chunks; c++) {
    const value = values[c];
    assert.ok(value !== undefined, `segment ${segmentId} chunk ${c} is missing`);
    out.set(value, p);
    p += value.length;
  }
  assert.equal(p, byteLength, `segment ${segmentId} has the wrong size`);
  if (crc !== undefined && crc32(out) !== crc) throw engineErrors.storeCorrupted(`segment ${segmentId} (in the shard's LevelDB tables)`, 'checksum mismatch');
  return out;
}

export async function readManifest(db: SegmentDatabase): Promise<Manifest> {
  const bytes = await db.get(MANIFEST_KEY);
  if (bytes === undefined) return { format: MANIFEST_FORMAT, seq: 0, nextSegmentId: 1, segments: [] };
  const manifest = decode(bytes) as Manifest;
  assert.equal(manifest.format, MANIFEST_FORMAT, 'unsupported manifest format');
  return manifest;
}

export async function writeManifest(db: SegmentDatabase, manifest: Manifest, sync = false): Promise<void> {
  await db.put(MANIFEST_KEY, Buffer.from(encode(manifest)), { sync });
}

/** Delete every chunk of segments the manifest does not name. Returns the ids removed. */
export async function removeOrphanSegments(db: SegmentDatabase, manifest: Manifest): Promise<number[]> {
  const named = new Set(manifest.segments.map((s) => s.id));
  const orphans: number[] = [];
  let from: Buffer = Buffer.of(PREFIX_SEGMENT_CHUNKS);
  const end = Buffer.of(PREFIX_SEGMENT_CHUNKS + 1);
  // One key per segment id: jump past each id's range instead of walking its chunks.
  for (;;) {
    const [key] = await db.keys({ gte: from, lt: end, limit: 1 }).all();
    if (key === undefined) break;
    const id = key.readUInt32BE(1);
    if (!named.has(id)) orphans.push(id);
    if (id === 0xffffffff) break;
    from = chunkKey(id + 1, 0);
  }
  for (const id of orphans) await db.clear(segmentRange(id));
  return orphans;
}

/**
 * The live segments of one shard: opens them from the manifest, publishes
 * new ones (flush) and merge results, and persists deletions. Publications
 * run one at a time (a promise chain), each ending with one manifest put.
 */
export class SegmentStore {
  private chain: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly db: SegmentDatabase,
    private manifest: Manifest,
    /** Live segments, oldest first. */
    public readers: SegmentReader[],
    readonly orphansRemoved: number[],
    /** Each live segment's CRC-32 by id (none for segments published before checksums). */
    private readonly crcs: Map<number, number>,
  ) {}

  static async open(db: SegmentDatabase): Promise<SegmentStore> {
    const manifest = await readManifest(db);
    const orphans = await removeOrphanSegments(db, manifest);
    const readers: SegmentReader[] = [];
    const crcs = new Map<number, number>();
    for (const s of manifest.segments) {
      const bytes = await readSegmentBytes(db, s.id, s.byteLength, s.crc ?? undefined);
      if (typeof s.crc === 'number') crcs.set(s.id, s.crc);
      const deleted = s.deleted === null ? undefined : Bitset.fromBytes(s.docCount, s.deleted);
      readers.push(new SegmentReader(s.id, bytes, deleted));
    }
    return new SegmentStore(db, manifest, readers, orphans, crcs);
  }

  /** Op-log seq covered by the published segments. */
  get seq(): number {
    return this.manifest.seq;
  }

  /** Mark `docid` deleted in every segment holding it; returns how many did. Persisted by the next publish. */
  delete(docid: number): number {
    let n = 0;
    for (const r of this.readers) if (r.delete(docid)) n++;
    return n;
  }

  /**
   * Publish a flushed segment covering the op log up to `seq`. `stillLive`
   * (the frozen buffer's isLive) carries deletes made during the flush.
   */
  addSegment(bytes: Uint8Array, seq: number, stillLive?: (docid: number) => boolean, sync = false): Promise<SegmentReader> {
    return this.serialise(async () => {
      const id = this.manifest.nextSegmentId;
      this.crcs.set(id, await writeSegmentChunks(this.db, id, bytes));
      const reader = new SegmentReader(id, bytes);
      if (stillLive !== undefined) {
        for (let o = 0; o < reader.docCount; o++) if (!stillLive(reader.docids[o]!)) reader.delete(reader.docids[o]!);
      }
      const readers = [...this.readers, reader];
      await this.publish(readers, Math.max(seq, this.manifest.seq), id + 1, sync);
      return reader;
    });
  }

  /**
   * Publish a merge of `sources` (encoded by mergeSegments with the deletion
   * snapshots `snapshots`): deletes that hit the sources since are carried to
   * the merged segment, the sources are unpublished and their chunks removed.
   */
  replaceSegments(sources: readonly SegmentReader[], snapshots: readonly Bitset[], bytes: Uint8Array): Promise<SegmentReader | null> {
    return this.serialise(async () => {
      for (const s of sources) assert.ok(this.readers.includes(s), 'merged segment is no longer live');
      const id = this.manifest.nextSegmentId;
      let merged: SegmentReader | null = new SegmentReader(id, bytes);
      // A merge of fully deleted segments publishes nothing.
      const empty = merged.docCount === 0;
      if (empty) {
        merged = null;
      } else {
        this.crcs.set(id, await writeSegmentChunks(this.db, id, bytes));
        sources.forEach((s, i) => {
          const before = snapshots[i]!;
          for (let o = s.deleted.nextSetBit(0); o >= 0; o = s.deleted.nextSetBit(o + 1)) {
            if (!before.has(o)) merged!.delete(s.docids[o]!);
          }
        });
      }
      // The merged segment takes the place of the oldest source (order is only informative).
      const readers: SegmentReader[] = [];
      let placed = false;
      for (const r of this.readers) {
        if (sources.includes(r)) {
          if (!placed && merged !== null) readers.push(merged);
          placed = true;
        } else {
          readers.push(r);
        }
      }
      await this.publish(readers, this.manifest.seq, empty ? id : id + 1, false);
      for (const s of sources) {
        await this.db.clear(segmentRange(s.id));
        this.crcs.delete(s.id);
      }
      return merged;
    });
  }

  /** Persist the current deletion bitsets and covered seq (a manifest put). */
  saveDeletions(seq = this.manifest.seq, sync = false): Promise<void> {
    return this.serialise(() => this.publish(this.readers, Math.max(seq, this.manifest.seq), this.manifest.nextSegmentId, sync));
  }

  private async publish(readers: SegmentReader[], seq: number, nextSegmentId: number, sync: boolean): Promise<void> {
    const manifest: Manifest = {
      format: MANIFEST_FORMAT,
      seq,
      nextSegmentId,
      segments: readers.map((r) => {
        const entry: ManifestSegment = { id: r.id, byteLength: r.byteLength, docCount: r.docCount, deleted: r.deletedDocs === 0 ? null : r.deleted.toBytes() };
        const crc = this.crcs.get(r.id);
        if (crc !== undefined) entry.crc = crc;
        return entry;
      }),
    };
    await writeManifest(this.db, manifest, sync);
    this.manifest = manifest;
    this.readers = readers;
  }

  private serialise<T>(work: () => Promise<T>): Promise<T> {
    const run = this.chain.then(work, work);
    this.chain = run.catch(() => undefined);
    return run;
  }
}
