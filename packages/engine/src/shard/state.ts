/**
 * What every part of a shard copy shares (shard.ts composes the parts): the
 * LevelDB database and its counters, the document cache, the group-commit
 * writer, the operation log, the search index and the schema it indexes
 * with, the replication position, and the content volumes; with the reads
 * every part makes (documents by ID or #docid, coalesced and retried over a
 * reopen) and the per-document write chains.
 *
 * Per-document serialisation: writes to one document run one after another
 * (`locked`: a Map of in-flight promise chains, an entry per document with
 * work in flight, removed when done).
 */
import type { StoreMemoryBudget } from '../store/store-memory.js';
import assert from 'node:assert/strict';
import type { TesseraError } from '@tessera/errors';
import type { ScriptRunner } from '@tessera/scripting';
import type { ContentVolumes } from '../content/volumes.js';
import { cachedBytes, DocumentCache } from '../documents/document-cache.js';
import { cachedForm } from '../documents/json-document.js';
import { documentIdKey, validateDocumentId } from '../documents/document-id.js';
import { IdFilter } from '../documents/id-filter.js';
import type { DocumentId, StoredDocument, WriteResult } from '../documents/types.js';
import { engineErrors } from '../errors.js';
import type { ShardIndex } from '../indexing/index.js';
import type { EngineLogger } from '../logger.js';
import { ReplicaPosition, Tombstones, type ReplicationState } from '../replication/index.js';
import { GetCoalescer } from '../store/get-coalescer.js';
import type { CommitLog } from '../store/commit-log.js';
import { GroupCommit, type BatchOutcome, type PendingBatch } from '../store/group-commit.js';
import { decodeIdTag, docidKey, DOCID_MAX, documentKey, PREFIX_DOCIDS, spaceRange } from '../store/keys.js';
import { LatencyHistogram } from '../store/latency-histogram.js';
import { Oplog, type ShardDatabase } from '../store/oplog.js';
import { decodeDocumentRecord, type ShardCounters } from '../store/records.js';
import { NO_STORED_SCHEMA, type SchemaStorage } from '../store/stored-schema.js';
import { BARRIER, type Change } from './change.js';
import type { ShardSettings } from './options.js';

interface ReadFlight {
  /** A write to this document completed after the read began: don't cache what it returns. */
  stale: boolean;
  promise: Promise<StoredDocument | undefined>;
}

export const noop = (): void => {};

export const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/** Writes one batch of changes (shard/batch.ts); given to the state so its writer can call it. */
export type CommitBatch = (state: ShardState, changes: Change[], sync: boolean) => Promise<BatchOutcome<WriteResult | null>[] | PendingBatch<WriteResult | null>>;

/** IDs read from LevelDB per step of the ID filter's fill at open. */
const ID_FILL_BATCH = 1024;

export class ShardState {
  counters: ShardCounters;
  readonly cache: DocumentCache;
  /** The IDs this copy may hold, so a write of a new one reads nothing (documents/id-filter.ts). */
  readonly ids: IdFilter;
  /** The filling of `ids` from LevelDB at open, while it runs. */
  idsFilled: Promise<void> = Promise.resolve();
  readonly writer: GroupCommit<Change, WriteResult | null>;
  readonly oplog: Oplog;
  private readonly reader: GetCoalescer;
  /** Per-document write chains: the tail of each chain (never rejects). */
  readonly locks = new Map<string, Promise<void>>();
  /** Document reads in flight, one per ID (concurrent misses share one LevelDB get). */
  readonly reads = new Map<string, ReadFlight>();
  /** Bumped when a reopen finds that a failed batch did reach the disk: decisions made before are void. */
  stateEpoch = 0;
  recoveryNeeded = false;
  /** A barrier is queued to run the recovery (at most one at a time). */
  recoveryRequested = false;
  /**
   * The last failed batch met a full disk: the database stays open for reads
   * and is reopened only once there is room for it (shard/recovery.ts), since
   * a reopen writes a table and a log, and a database that cannot reopen
   * serves no reads at all.
   */
  diskFull = false;
  /** Free bytes the data directory needs before a reopen after a full disk: LevelDB writes the log's memtable as a table. */
  readonly reopenBytesMin: number;
  /** The reopen in progress: reads that hit the closing database wait for it and retry once. */
  recovering: Promise<void> | undefined;
  closing = false;
  readonly counts = { batchesWritten: 0, batchesSynced: 0, batchesFailed: 0, changesWritten: 0, recoveries: 0 };
  /** Time of each successful LevelDB batch write, buffered and synced (fsync) apart: they differ by orders of magnitude. */
  readonly commitSeconds = { buffered: new LatencyHistogram(), synced: new LatencyHistogram() };
  /** The searchable index: write buffer, segments, merges (shard/recovery.ts opens it). */
  index!: ShardIndex;
  /**
   * The index schema the shard indexes with (cluster state, sent with each write): the stored one. Once a write
   * brought it, the caller's object itself, shared with the index's other copies and the coordinator (never mutated).
   */
  schema: Record<string, unknown> = {};
  /** What LevelDB holds of the schema (base and deltas, store/stored-schema.ts): where the next change goes. */
  schemaStorage: SchemaStorage = NO_STORED_SCHEMA;
  /** Runs the scripts of writes on this copy when it is the primary (ShardOptions.scripts). */
  scripts: ScriptRunner | undefined;
  /** Primary term seen and replication checkpoint, persisted with the batches (META_REPLICATION). */
  readonly position: ReplicaPosition;
  /** Origins of documents deleted by replication, so a late older put does not bring them back. */
  readonly tombstones = new Tombstones();
  /** Stored content volumes (API.md §6), opened with the shard. */
  content!: ContentVolumes;
  /** The bound on the LevelDB memory this copy shares (its batches wait on `admit`). */
  storeMemory: StoreMemoryBudget | undefined;
  /** Stops the store-memory budget watching the database (resolves once no flush of it runs). */
  releaseStoreMemory: () => Promise<void> = () => Promise.resolve();
  /** The node's commit log, which `commit` batches are made durable in (store/commit-log.ts); undefined: LevelDB syncs them. */
  commitLog: CommitLog | undefined;
  /** This copy's ID in the commit log (stored in its LevelDB: META_COMMIT_LOG_TOKEN). */
  commitLogToken: Buffer = Buffer.alloc(0);
  /** How the commit log's records name this copy (CommitLog.copyPath). */
  commitLogPath = '';
  /** Every batch written so far is durable (synced in LevelDB or the commit log): the next synced one may go to the log. */
  durable = false;
  /** The last batch's finishing (shard/batch.ts): batches are applied to the index and cache in seq order. */
  applying: Promise<void> = Promise.resolve();
  /** Stops the commit log running this copy's checkpoint. */
  releaseCommitLog: () => void = noop;
  /** Whether puts analyse their text on the analysis thread (ShardOptions.analysisThread). */
  readonly analysisThread: boolean;

  constructor(
    readonly db: ShardDatabase,
    readonly path: string,
    readonly log: EngineLogger,
    settings: ShardSettings,
    counters: ShardCounters,
    oplogFirstSeq: number,
    replication: ReplicationState,
    commitBatch: CommitBatch,
  ) {
    this.counters = counters;
    this.analysisThread = settings.analysisThread;
    this.reopenBytesMin = 2 * settings.storeWriteBufferBytes + (1 << 20);
    this.position = new ReplicaPosition(replication);
    this.cache = new DocumentCache(settings.documentCache ?? settings.documentCacheBytesMax);
    this.ids = new IdFilter(counters.documents);
    if (counters.lastDocid === 0) this.ids.markComplete();
    this.oplog = new Oplog(db, settings.oplogEntriesMax, oplogFirstSeq);
    this.reader = new GetCoalescer(db);
    this.writer = new GroupCommit((changes, sync) => commitBatch(this, changes, sync), {
      windowMs: settings.groupCommitWindowMs,
      entriesMax: settings.batchEntriesMax,
    });
  }

  /** Refuse a call on a closing copy (503 shard_closed). */
  checkOpen(): void {
    if (this.closing) throw engineErrors.shardClosed();
  }

  /** Run `work` after every earlier write to the document (per-document chain; the entry goes once the chain is idle). */
  locked<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(key);
    const run = previous === undefined ? work() : previous.then(work);
    const tail = run.then(noop, noop);
    this.locks.set(key, tail);
    void tail.then(() => {
      if (this.locks.get(key) === tail) this.locks.delete(key);
    });
    return run;
  }

  /** The current document, from the cache or LevelDB (for a write deciding on it, under its lock). */
  async current(id: DocumentId, key: string): Promise<StoredDocument | undefined> {
    return this.cache.get(key) ?? (this.neverWritten(id, key) ? undefined : await this.readDocument(id, key));
  }

  /**
   * The current document with this #docid, or undefined. Shared object: never mutate it.
   * `idOf`, when the caller can tell the ID (a search hit's `_id` column), saves the read of the docid → ID key
   * on a cache miss.
   */
  async getByDocid(docid: number, idOf?: () => DocumentId | undefined): Promise<StoredDocument | undefined> {
    this.checkOpen();
    if (!Number.isSafeInteger(docid) || docid < 1 || docid > DOCID_MAX) return undefined;
    const cached = this.cache.getByDocid(docid);
    if (cached !== undefined) return cached;
    const id = idOf?.();
    if (id !== undefined) {
      const doc = await this.get(id);
      if (doc?.docid === docid) return doc;
    }
    const tag = await this.readKey(docidKey(docid));
    if (tag === undefined) return undefined;
    const doc = await this.get(decodeIdTag(tag));
    return doc?.docid === docid ? doc : undefined;
  }

  /**
   * The current document, or undefined. Served from the cache when hot.
   * The returned object is shared (cache): never mutate it.
   */
  async get(id: DocumentId): Promise<StoredDocument | undefined> {
    validateDocumentId(id);
    this.checkOpen();
    const key = documentIdKey(id);
    return this.cache.get(key) ?? this.readDocument(id, key);
  }

  /**
   * Let the op log drop what it no longer needs: entries the index has
   * persisted, beyond the log's bound. After each batch, and after each flush
   * (so the log converges when writes stop before the index catches up).
   */
  trimOplog(): void {
    this.oplog.retainFrom = this.index.persistedSeq + 1;
    this.oplog.afterAppend(this.counters.seq);
  }

  /**
   * No document has this ID (`key`, its documentIdKey): the shard never assigned a docid, the ID is a number
   * above every one it ever wrote, or the ID filter has never seen it. No LevelDB read is needed then (a bulk
   * load of ascending numeric IDs, or of new string IDs, reads nothing). The counters only grow and are written
   * in the batch of the change that raised them, a put's key enters the filter before its batch is written, and
   * a document's earlier writes finish (under its lock) before the next one looks.
   */
  neverWritten(id: DocumentId, key: string): boolean {
    return this.counters.lastDocid === 0 || (typeof id === 'number' && id > this.counters.maxNumericId) || !this.ids.mayHave(key);
  }

  /**
   * Reads the IDs of the stored documents into the ID filter, in the background (writes read LevelDB until it
   * is done). Stops when the copy closes; if LevelDB fails meanwhile (a reopen), the filter stays incomplete and
   * writes keep reading.
   *
   * From the #docid map, whose values are exactly the stored documents' IDs (a batch writes or deletes a
   * document and its entry together), not from the documents' keys: LevelDB reads a key's whole block, so
   * iterating the documents' keys read every stored body (the Debian corpus: ~90 MB of blocks for 63,440 IDs).
   */
  fillIds(): void {
    if (this.ids.ready) return;
    const tags = this.db.values(spaceRange(PREFIX_DOCIDS));
    // In batches: one await per element (two async iterators) cost ~6 µs an ID, 400 ms for 63,440.
    async function* batches(): AsyncGenerator<DocumentId[]> {
      for (let batch = await tags.nextv(ID_FILL_BATCH); batch.length > 0; batch = await tags.nextv(ID_FILL_BATCH)) {
        yield batch.map((tag) => decodeIdTag(tag));
      }
    }
    this.idsFilled = this.ids.fill(batches(), () => this.closing)
      .catch((err: unknown) => this.log.warn({ err }, 'could not read the stored document IDs; writes of new IDs read LevelDB'))
      .finally(() => tags.close().catch(noop));
  }

  /** A document from LevelDB; concurrent misses of one ID share the get unless a write made it stale. */
  readDocument(id: DocumentId, key: string): Promise<StoredDocument | undefined> {
    const existing = this.reads.get(key);
    if (existing !== undefined && !existing.stale) return existing.promise;
    const flight: ReadFlight = { stale: false, promise: Promise.resolve(undefined) };
    this.reads.set(key, flight);
    flight.promise = this.readFromDisk(id, key, flight);
    return flight.promise;
  }

  /**
   * `doc` (decoded from a stored record of `recordBytes`) in the form the
   * cache keeps (`cachedForm`), cached under its ID key `key` when `cache`;
   * what a read answers and what a write leaves cached are the same form.
   */
  cachedDocument(key: string, doc: StoredDocument, recordBytes: number, cache = true): StoredDocument {
    const form = cachedForm(doc);
    if (cache) this.cache.set(key, form, cachedBytes(form, recordBytes));
    return form;
  }

  private async readFromDisk(id: DocumentId, key: string, flight: ReadFlight): Promise<StoredDocument | undefined> {
    try {
      const bytes = await this.readKey(documentKey(id));
      if (bytes === undefined) return undefined;
      const doc = decodeDocumentRecord(bytes);
      assert.equal(documentIdKey(doc.id), key, 'the document record holds another ID');
      return this.cachedDocument(key, doc, bytes.length, !flight.stale);
    } finally {
      if (this.reads.get(key) === flight) this.reads.delete(key);
    }
  }

  /**
   * One LevelDB value (coalesced with the other reads of this tick). A read
   * that met the database closed by a reopen waits for the reopen and retries
   * once; other LevelDB errors become 503s.
   */
  async readKey(key: Buffer): Promise<Buffer | undefined> {
    try {
      return await this.reader.get(key);
    } catch (err) {
      const recovering = this.recovering;
      if (recovering !== undefined) await recovering.catch(noop);
      else if (this.db.status !== 'open') throw this.readFailed(err);
    }
    try {
      return await this.reader.get(key);
    } catch (err) {
      throw this.readFailed(err);
    }
  }

  /** A read hit a LevelDB error; if the database was closed under us, reopen it. */
  readFailed(err: unknown): TesseraError {
    if (this.db.status === 'closed') this.requestRecovery();
    return engineErrors.storageUnavailable(err);
  }

  /**
   * Reopen the database soon, through the writer (so no batch runs meanwhile):
   * queue a barrier whose batch starts with `recover` (shard/recovery.ts).
   * One at a time, and only on demand (a failed batch, a read on a closed
   * database), so a broken disk is retried by the next request, never in a loop.
   */
  requestRecovery(): void {
    this.recoveryNeeded = true;
    if (this.recoveryRequested || this.closing) return;
    this.recoveryRequested = true;
    this.writer.submit(BARRIER, false).catch(noop);
  }

  /** A write to the document completed or failed: a read in flight must not cache what it finds. */
  markStale(key: string): void {
    const flight = this.reads.get(key);
    if (flight !== undefined) flight.stale = true;
  }
}
