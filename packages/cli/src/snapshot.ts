/**
 * `tessera snapshot --out DIR` and `tessera snapshot restore DIR --data DIR`
 * (docs/snapshots.md).
 *
 * Taking one: `POST /.snapshots/` answers a MessagePack sequence
 * (coordinator bulk/snapshot.ts): a header with the cluster state and the
 * shards, each shard's documents a page per frame, a frame closing each
 * shard, then `{end: true}`. It is written as it arrives into DIR:
 *
 *   manifest.json        what the snapshot holds: format, time, the shards (index, shard, term, seq, documents, file)
 *   state.json           the cluster state: indexes (settings, schemas), templates, aliases, named scripts, API keys (digests)
 *   shards/NNNN.msgpack  one shard: a MessagePack sequence, a header record, one record per document (version,
 *                        origin, body, the blobs of its stored content), an end record with the count
 *   SHA256SUMS           the SHA-256 of every other file, in `sha256sum -c` form; written last
 *
 * A snapshot without SHA256SUMS is incomplete (the command failed or was cut).
 *
 * Restoring one: every checksum is checked before anything is written (a
 * damaged file is named and nothing happens), the data directory must be
 * empty, and the shards are loaded through a shard node in this process as a
 * replica's full copy is (`doc.replicate` with the documents' versions and
 * origins, then `shard.follow` to the shard's seq), under the node name
 * `tessera serve` will use. The cluster state is written last, with every
 * shard allocated to that node: `tessera serve --data DIR --name NAME` then
 * serves the snapshot, whether it was taken of an embedded server or a cluster.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import { decodeMultiStream, encode } from '@msgpack/msgpack';
import { request } from 'undici';
import {
  type ClusterState, type IndexMeta, SNAPSHOT_FORMAT, SNAPSHOT_FORMAT_VERSION, SNAPSHOT_MEDIA_TYPE, type SnapshotHeader, type SnapshotShard, writeLocalState,
} from '@tessera/coordinator';
import { ShardNode } from '@tessera/node';
import { blobLength, type ReplicatedChange } from '@tessera/rpc';
import { authHeaders, authHint } from './client-auth.js';
import { lockDataDirectory } from './data-lock.js';
import { mebibytes, Progress } from './progress.js';

const MANIFEST_FILE = 'manifest.json';
const STATE_FILE = 'state.json';
const SUMS_FILE = 'SHA256SUMS';
/** Changes per `doc.replicate` call of a restore, at most (the node takes up to 10,000). */
const RESTORE_BATCH_CHANGES = 500;
/** …and about this many bytes of bodies and blobs. */
const RESTORE_BATCH_BYTES = 8 * 1024 * 1024;

/** One shard as manifest.json lists it. */
export interface ManifestShard extends SnapshotShard {
  /** Its file, relative to the snapshot directory. */
  file: string;
}

export interface SnapshotManifest {
  format: typeof SNAPSHOT_FORMAT;
  version: typeof SNAPSHOT_FORMAT_VERSION;
  createdAt: string;
  /** The server it was taken from. */
  source: string;
  shards: ManifestShard[];
}

/** A document record of a shard file: a replica's full-copy change. */
type ShardRecord = Omit<ReplicatedChange, 'seq' | 'deleted'>;

interface ProgressFlags {
  progress: boolean;
  progressIntervalMs: number;
}

export interface SnapshotOptions extends ProgressFlags {
  url: string;
  out: string;
  apiKey?: string | undefined;
}

export interface SnapshotSummary {
  shards: number;
  documents: number;
  bytes: number;
  seconds: number;
}

export async function runSnapshot(options: SnapshotOptions): Promise<SnapshotSummary> {
  const startedAt = process.hrtime.bigint();
  await requireEmptyDirectory(options.out, 'the snapshot directory (--out)');
  let res: Awaited<ReturnType<typeof request>>;
  try {
    res = await request(new URL('/.snapshots/', options.url), { method: 'POST', headers: { accept: `${SNAPSHOT_MEDIA_TYPE}, application/json;q=0.5`, ...authHeaders(options.apiKey) } });
  } catch (err) {
    throw new Error(`cannot reach the server at ${options.url}: ${(err as Error).message} (is \`tessera serve\` running there?)`);
  }
  if (res.statusCode !== 200) throw new Error(`the snapshot was refused: ${await errorMessage(res)}${authHint(res.statusCode, options.apiKey)}`);
  const writer = new SnapshotWriter(options.out, options.url);
  let progress: Progress | undefined;
  try {
    await mkdir(join(options.out, 'shards'), { recursive: true });
    for await (const frame of decodeMultiStream(res.body)) {
      if (writer.header === undefined) {
        writer.begin(frame);
        progress = new Progress({ enabled: options.progress, intervalMs: options.progressIntervalMs, label: 'snapshot' }, () => ({
          documents: writer.documents, errors: 0, itemsRead: writer.documents, bytesRead: writer.bytes, bytesTotal: undefined,
          documentsTotal: writer.documentsTotal,
        }));
        progress.start();
        continue;
      }
      await writer.frame(frame);
      if (writer.ended) break;
    }
    await writer.finish();
  } catch (err) {
    progress?.stop();
    await writer.abandon();
    res.body.destroy();
    throw new Error(`the snapshot failed after ${writer.documents} documents (${options.out} was removed): ${(err as Error).message}`);
  }
  progress?.stop();
  const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
  const shards = writer.header?.shards.length ?? 0;
  process.stderr.write(`snapshot of ${shards} shards, ${writer.documents} documents (${mebibytes(writer.bytes)}) written to ${options.out} in ${seconds.toFixed(1)} s\n`);
  return { shards, documents: writer.documents, bytes: writer.bytes, seconds };
}

/** A file being written with its SHA-256 computed on the way. */
class HashedFile {
  private readonly hash = createHash('sha256');
  private readonly stream: WriteStream;
  bytes = 0;

  constructor(readonly path: string, readonly name: string) {
    this.stream = createWriteStream(path, { flags: 'wx' });
  }

  async write(bytes: Uint8Array): Promise<void> {
    this.hash.update(bytes);
    this.bytes += bytes.length;
    if (!this.stream.write(bytes)) await once(this.stream, 'drain');
  }

  /** Flushed, synced and closed; its checksum line. */
  async close(): Promise<string> {
    this.stream.end();
    await once(this.stream, 'finish');
    await fsyncFile(this.path);
    return `${this.hash.digest('hex')}  ${this.name}`;
  }

  destroy(): void {
    this.stream.destroy();
  }
}

/** The snapshot directory being written from the server's frames. */
class SnapshotWriter {
  header: SnapshotHeader | undefined;
  documents = 0;
  bytes = 0;
  ended = false;
  private current: { file: HashedFile; position: number; count: number } | undefined;
  private next = 0;
  private readonly sums: string[] = [];
  private readonly files: ManifestShard[] = [];

  constructor(private readonly dir: string, private readonly source: string) {}

  get documentsTotal(): number | undefined {
    return this.header?.shards.reduce((sum, s) => sum + s.documents, 0);
  }

  begin(frame: unknown): void {
    const header = frame as Partial<SnapshotHeader> | null;
    if (header?.format !== SNAPSHOT_FORMAT || header.version !== SNAPSHOT_FORMAT_VERSION || !Array.isArray(header.shards)) {
      throw new Error(`the server answered something else than a ${SNAPSHOT_FORMAT} version ${SNAPSHOT_FORMAT_VERSION} stream`);
    }
    this.header = header as SnapshotHeader;
  }

  async frame(value: unknown): Promise<void> {
    const frame = value as { shard?: number; documents?: unknown; done?: boolean; end?: boolean };
    const header = this.header as SnapshotHeader;
    if (frame.end === true) {
      if (this.current !== undefined || this.next !== header.shards.length) throw new Error('the stream ended before every shard was sent');
      this.ended = true;
      return;
    }
    if (typeof frame.shard !== 'number' || header.shards[frame.shard] === undefined) throw new Error('the stream names no shard of its header');
    const shard = header.shards[frame.shard] as SnapshotShard;
    if (this.current === undefined) {
      if (frame.shard !== this.next) throw new Error(`shard ${frame.shard} came out of order`);
      this.current = { file: await this.openShard(frame.shard, shard), position: frame.shard, count: 0 };
    }
    const current = this.current;
    if (current.position !== frame.shard) throw new Error(`shard ${frame.shard} began before shard ${current.position} ended`);
    if (frame.done === true) {
      if (frame.documents !== current.count || current.count !== shard.documents) {
        throw new Error(`shard ${shard.shard} of ${shard.index}: ${current.count} documents received, ${shard.documents} expected`);
      }
      await current.file.write(encode({ end: true, documents: current.count }));
      await this.closeFile(current.file);
      this.current = undefined;
      this.next++;
      return;
    }
    if (!Array.isArray(frame.documents)) throw new Error('a shard frame without documents');
    for (const document of frame.documents as ShardRecord[]) {
      await current.file.write(encode(document));
      current.count++;
      this.documents++;
    }
  }

  /** manifest.json, state.json, then SHA256SUMS: the snapshot is complete once that one is there. */
  async finish(): Promise<void> {
    if (!this.ended) throw new Error('the stream was cut short (no end frame)');
    const header = this.header as SnapshotHeader;
    const manifest: SnapshotManifest = {
      format: SNAPSHOT_FORMAT, version: SNAPSHOT_FORMAT_VERSION, createdAt: header.createdAt, source: this.source, shards: this.files,
    };
    await this.writeWhole(STATE_FILE, `${JSON.stringify(header.state, null, 1)}\n`);
    await this.writeWhole(MANIFEST_FILE, `${JSON.stringify(manifest, null, 1)}\n`);
    const temporary = join(this.dir, `${SUMS_FILE}.partial`);
    await writeFile(temporary, `${this.sums.join('\n')}\n`);
    await fsyncFile(temporary);
    await rename(temporary, join(this.dir, SUMS_FILE));
    await fsyncFile(this.dir);
  }

  async abandon(): Promise<void> {
    this.current?.file.destroy();
    await rm(this.dir, { recursive: true, force: true });
  }

  private async openShard(position: number, shard: SnapshotShard): Promise<HashedFile> {
    const name = `shards/${String(position + 1).padStart(4, '0')}.msgpack`;
    this.files.push({ ...shard, file: name });
    const file = new HashedFile(join(this.dir, name), name);
    await file.write(encode({ index: shard.index, uuid: shard.uuid, shard: shard.shard, term: shard.term, seq: shard.seq, documents: shard.documents }));
    return file;
  }

  private async writeWhole(name: string, text: string): Promise<void> {
    const file = new HashedFile(join(this.dir, name), name);
    await file.write(Buffer.from(text, 'utf8'));
    await this.closeFile(file);
  }

  private async closeFile(file: HashedFile): Promise<void> {
    this.sums.push(await file.close());
    this.bytes += file.bytes;
  }
}

export interface RestoreOptions extends ProgressFlags {
  /** The snapshot directory. */
  from: string;
  /** The data directory to create (empty or missing). */
  data: string;
  /** The node name `tessera serve` will run with (its shard copies live under `nodes/<name>/`). */
  nodeName: string;
}

export interface RestoreSummary {
  shards: number;
  documents: number;
  seconds: number;
}

export async function runRestore(options: RestoreOptions): Promise<RestoreSummary> {
  const startedAt = process.hrtime.bigint();
  const manifest = await verifySnapshot(options.from);
  await requireEmptyDirectory(options.data, 'the data directory (--data)');
  const state = JSON.parse(await readFile(join(options.from, STATE_FILE), 'utf8')) as ClusterState;
  for (const shard of manifest.shards) {
    if (state.indexes[shard.index]?.uuid !== shard.uuid) throw new Error(`${STATE_FILE} does not describe the index ${shard.index} of ${shard.file}`);
  }
  await mkdir(options.data, { recursive: true });
  const lock = await lockDataDirectory(options.data);
  const node = new ShardNode({ name: options.nodeName, dataDir: join(options.data, 'nodes', options.nodeName) });
  let documents = 0;
  const documentsTotal = manifest.shards.reduce((sum, s) => sum + s.documents, 0);
  const progress = new Progress({ enabled: options.progress, intervalMs: options.progressIntervalMs, label: 'restore' }, () => ({
    documents, errors: 0, itemsRead: documents, bytesRead: 0, bytesTotal: undefined, documentsTotal,
  }));
  progress.start();
  try {
    for (const shard of manifest.shards) {
      const meta = state.indexes[shard.index] as IndexMeta;
      await restoreShard(node, join(options.from, shard.file), shard, meta.schema as Record<string, unknown>, (n) => {
        documents += n;
      });
    }
    await node.close();
    // The local store's files as it reads them: the state as the base, no log of changes.
    await writeLocalState(join(options.data, 'cluster-state.json'), restoredState(state, manifest, options.nodeName));
  } catch (err) {
    progress.stop();
    await node.close().catch(() => undefined);
    await lock.release();
    await rm(options.data, { recursive: true, force: true });
    throw new Error(`the restore failed (${options.data} was removed): ${(err as Error).message}`);
  }
  progress.stop();
  await lock.release();
  const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
  process.stderr.write(`restored ${manifest.shards.length} shards, ${documents} documents into ${options.data} (node ${options.nodeName}) in ${seconds.toFixed(1)} s\n`);
  return { shards: manifest.shards.length, documents, seconds };
}

/**
 * Every file of SHA256SUMS checked (size and SHA-256), and the manifest's
 * files all among them; the manifest. Refuses, naming the file, before
 * anything is written.
 */
export async function verifySnapshot(dir: string): Promise<SnapshotManifest> {
  let sumsText: string;
  try {
    sumsText = await readFile(join(dir, SUMS_FILE), 'utf8');
  } catch (err) {
    throw new Error(`${dir} is not a complete snapshot: ${SUMS_FILE} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); `
      + 'a snapshot whose command failed or was cut has none');
  }
  const expected = new Map<string, string>();
  for (const line of sumsText.split('\n')) {
    if (line === '') continue;
    const match = /^([0-9a-f]{64}) {2}([A-Za-z0-9._/-]+)$/.exec(line);
    if (match === null || (match[2] as string).split('/').includes('..')) throw new Error(`${SUMS_FILE} is damaged: unreadable line ${JSON.stringify(line)}`);
    expected.set(match[2] as string, match[1] as string);
  }
  for (const [name, sum] of expected) {
    let actual: string;
    try {
      actual = await sha256Of(join(dir, name));
    } catch (err) {
      throw new Error(`snapshot file ${name} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): refusing to restore`);
    }
    if (actual !== sum) {
      throw new Error(`snapshot file ${name} is corrupted: its SHA-256 is ${actual}, ${SUMS_FILE} says ${sum}; refusing to restore (nothing was written)`);
    }
  }
  for (const name of [MANIFEST_FILE, STATE_FILE]) {
    if (!expected.has(name)) throw new Error(`${SUMS_FILE} lists no ${name}: refusing to restore`);
  }
  const manifest = JSON.parse(await readFile(join(dir, MANIFEST_FILE), 'utf8')) as SnapshotManifest;
  if (manifest.format !== SNAPSHOT_FORMAT || manifest.version !== SNAPSHOT_FORMAT_VERSION) {
    throw new Error(`${MANIFEST_FILE} is not a ${SNAPSHOT_FORMAT} version ${SNAPSHOT_FORMAT_VERSION} manifest`);
  }
  for (const shard of manifest.shards) {
    if (!expected.has(shard.file)) throw new Error(`${SUMS_FILE} lists no ${shard.file} (shard ${shard.shard} of ${shard.index}): refusing to restore`);
  }
  return manifest;
}

/** One shard file into the node: its documents as a full copy (`restored` counts them), then the seq it holds. */
async function restoreShard(node: ShardNode, path: string, shard: ManifestShard, schema: Record<string, unknown>,
  restored: (count: number) => void): Promise<void> {
  const ref = { index: shard.index, shard: shard.shard };
  await node.handle('shard.open', ref);
  let header: Record<string, unknown> | undefined;
  let ended = false;
  let count = 0;
  let batch: ReplicatedChange[] = [];
  let batchBytes = 0;
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    await node.handle('doc.replicate', { ...ref, term: shard.term, changes: batch, schema });
    restored(batch.length);
    batch = [];
    batchBytes = 0;
  };
  for await (const value of decodeMultiStream(createReadStream(path))) {
    const record = value as Record<string, unknown>;
    if (header === undefined) {
      header = record;
      if (header.index !== shard.index || header.shard !== shard.shard || header.seq !== shard.seq) throw new Error(`${shard.file} does not hold shard ${shard.shard} of ${shard.index}`);
      continue;
    }
    if (ended) throw new Error(`${shard.file} goes on after its end record`);
    if (record.end === true) {
      ended = true;
      if (record.documents !== count || count !== shard.documents) throw new Error(`${shard.file} holds ${count} documents, ${shard.documents} expected`);
      continue;
    }
    const document = record as unknown as ShardRecord;
    batch.push({ ...document, deleted: false });
    count++;
    batchBytes += recordBytes(document);
    if (batch.length >= RESTORE_BATCH_CHANGES || batchBytes >= RESTORE_BATCH_BYTES) await flush();
  }
  if (!ended) throw new Error(`${shard.file} has no end record`);
  await flush();
  await node.handle('shard.follow', { ...ref, term: shard.term, checkpoint: shard.seq });
}

/** About the bytes a record carries (its blobs; bodies are small beside them). */
function recordBytes(record: ShardRecord): number {
  return (record.content ?? []).reduce((sum, c) => sum + (c.bytes === undefined ? 0 : blobLength(c.bytes)), 1024);
}

/** The snapshot's cluster state, every shard of every index on `nodeName` alone, in its term. */
function restoredState(state: ClusterState, manifest: SnapshotManifest, nodeName: string): ClusterState {
  const indexes: Record<string, IndexMeta> = {};
  for (const [path, meta] of Object.entries(state.indexes)) {
    const terms = manifest.shards.filter((s) => s.index === path).sort((a, b) => a.shard - b.shard).map((s) => s.term);
    indexes[path] = {
      ...meta,
      allocation: meta.allocation.map(() => [nodeName]),
      replication: meta.allocation.map((_copies, i) => ({ term: terms[i] ?? 1, inSync: [nodeName] })),
    };
  }
  return { ...state, version: 1, indexes, nodes: { [nodeName]: { firstJoinedAt: new Date().toISOString() } } };
}

async function requireEmptyDirectory(dir: string, what: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new Error(`${what} ${dir} cannot be read: ${(err as Error).message}`);
  }
  if (entries.length > 0) throw new Error(`${what} ${dir} is not empty (${entries.length} entries): give a new or empty directory`);
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function fsyncFile(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function errorMessage(res: Awaited<ReturnType<typeof request>>): Promise<string> {
  const text = await res.body.text();
  try {
    return (JSON.parse(text) as { message?: string }).message ?? `HTTP ${res.statusCode}`;
  } catch {
    return `HTTP ${res.statusCode}`;
  }
}
