/**
 * The writes of a primary (or lone) copy: read-modify-write of one document
 * under its lock (`mutate`), API.md §5 writes and stored content (`write`),
 * and bulk loads grouped into few batches (`writeMany`). Each decides on the
 * current document, computes the terms before anything is queued (a schema
 * 400 writes nothing), and hands one Change to the batch writer.
 */
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { blobLength } from '@tessera/documents';
import { documentIdKey, validateDocumentId } from '../documents/document-id.js';
import type { DocumentId, Mutation, StoredDocument, WriteRequest, WriteResult } from '../documents/types.js';
import { decideWrite, validateWriteRequest } from '../documents/write.js';
import { engineErrors } from '../errors.js';
import { validateTerm } from '../replication/index.js';
import type { BatchOutcome } from '../store/group-commit.js';
import { type Change, prepareChange } from './change.js';
import { appendContent } from './content.js';
import { acceptTerm } from './replication.js';
import { asError, noop, type ShardState } from './state.js';

export interface MutateOptions {
  /** Resolve only once the change is durable (its batch is a sync write). */
  commit?: boolean | undefined;
  /** The index schema to index the document with (sent by the coordinator with each write). */
  schema?: Record<string, unknown> | undefined;
  /** The primary term the write is made under; refused (503 stale_primary_term) when older than one this copy has seen. */
  term?: number | undefined;
  /** Part of a bulk load: the document written is not cached (WriteRequest.bulk). */
  bulk?: boolean | undefined;
}


/** What the writes of one `writeMany` share. */
export interface BulkWriteOptions {
  /** Answer once durable (one sync batch). */
  commit?: boolean;
  /** The index schema to index the results with. */
  schema?: Record<string, unknown>;
  /** The primary term the coordinator writes under. */
  term?: number;
}


/**
 * Read-modify-write of one document, serialised with every other write to
 * it. `decide` sees the current document (undefined when absent) and returns
 * the Mutation to store, or throws (a TesseraError: nothing is written and
 * the error propagates). The store assigns the version (current + 1, or 1),
 * the #docid (kept across updates, the next one for a new document) and the
 * seq. Resolves once the change is in LevelDB (durable with `commit`).
 *
 * A put's body becomes the stored document: the caller must not modify it
 * afterwards.
 */
export function mutate(state: ShardState, id: DocumentId, decide: (current: StoredDocument | undefined) => Mutation, options: MutateOptions = {}): Promise<WriteResult> {
  try {
    validateDocumentId(id);
    if (options.term !== undefined) validateTerm(options.term);
  } catch (err) {
    return Promise.reject(err);
  }
  if (state.closing) return Promise.reject(engineErrors.shardClosed());
  const key = documentIdKey(id);
  const commit = options.commit === true;
  const bulk = options.bulk === true;
  const { schema, term } = options;
  if (term === undefined || term === state.position.term) {
    return state.locked(key, () => mutateLocked(state, id, key, decide, commit, schema, term, bulk));
  }
  return acceptTerm(state, term).then(() => state.locked(key, () => mutateLocked(state, id, key, decide, commit, schema, term, bulk)));
}

/**
 * A document write with API.md §5 semantics (index, update, patch, delete;
 * expected versions; upsert), or a stored-content write (§6): its blob is
 * appended to a volume first (synced with `commit`), outside the document's
 * lock, and linked by the write. A write that then fails (409, 404) leaves
 * the blob unlinked: volumes are append-only.
 */
export async function write(state: ShardState, req: WriteRequest): Promise<WriteResult> {
  validateWriteRequest(req);
  if (state.closing) throw engineErrors.shardClosed();
  const stored = req.content !== undefined && blobLength(req.content.bytes) > 0 ? await appendContent(state, req.content, req.commit === true) : undefined;
  return mutate(state, req.id, (current) => decideWrite(req, current, { scripts: state.scripts, schema: req.schema ?? state.schema, schemaFromWrite: req.schema !== undefined }, stored),
    { commit: req.commit, schema: req.schema, term: req.term, bulk: req.bulk });
}

/**
 * Bulk writes (RESTORE), each as `write` with `bulk` would make it, in
 * order, answered in place (a result or the write's error). A write whose
 * current document is known without a read (cached, or an ID the shard
 * never wrote) and that no earlier write of its document precedes, here or
 * in flight, is decided now and queued with the others as one group: no
 * promise per document. The rest (a read, stored content, a later write of
 * a document already in the call) go through `write`, after those.
 */
export async function writeMany(state: ShardState, reqs: readonly WriteRequest[], options: BulkWriteOptions = {}): Promise<Array<BatchOutcome<WriteResult>>> {
  const { commit = false, schema, term } = options;
  try {
    if (term !== undefined) validateTerm(term);
    if (state.closing) throw engineErrors.shardClosed();
    if (term !== undefined && term !== state.position.term) await acceptTerm(state, term);
  } catch (err) {
    // Every write is refused as `write` would refuse it.
    return reqs.map(() => ({ ok: false, error: asError(err) }));
  }
  const outcomes = new Array<BatchOutcome<WriteResult>>(reqs.length);
  const grouped: Change[] = [];
  const groupedSlots: number[] = [];
  const later: number[] = [];
  // Documents an earlier write of this call goes to.
  const met = new Set<string>();
  const decideContext = { scripts: state.scripts, schema: schema ?? state.schema, schemaFromWrite: schema !== undefined };
  for (let i = 0; i < reqs.length; i++) {
    const req = reqs[i] as WriteRequest;
    let key: string;
    try {
      validateWriteRequest(req);
      validateDocumentId(req.id);
      key = documentIdKey(req.id);
    } catch (err) {
      outcomes[i] = { ok: false, error: asError(err) };
      continue;
    }
    const current = req.content === undefined && !met.has(key) && !state.locks.has(key)
      ? state.cache.get(key) ?? (state.neverWritten(req.id, key) ? null : undefined) : undefined;
    if (current === undefined) {
      met.add(key);
      later.push(i);
      continue;
    }
    try {
      const known = current ?? undefined;
      const change = prepareChange(req.id, key, known, decideWrite(req, known, decideContext, undefined), state.stateEpoch, state.position.term);
      change.uncached = true;
      prepareTerms(state, change, schema);
      met.add(key);
      grouped.push(change);
      groupedSlots.push(i);
    } catch (err) {
      // Nothing written: a later write of the document sees what this one saw.
      outcomes[i] = { ok: false, error: asError(err) };
    }
  }
  const committed = state.writer.submitMany(grouped, commit);
  if (grouped.length > 0) {
    // The group holds its documents' locks until written, so `write`s of them (below, or other callers') follow it.
    const tail = committed.then(noop, noop);
    for (const change of grouped) state.locks.set(change.key, tail);
    void tail.then(() => {
      for (const change of grouped) if (state.locks.get(change.key) === tail) state.locks.delete(change.key);
    });
  }
  const written = later.map((i) => write(state, { ...(reqs[i] as WriteRequest), bulk: true, commit, schema, term }).then(
    (value): BatchOutcome<WriteResult> => ({ ok: true, value }),
    (err: unknown): BatchOutcome<WriteResult> => ({ ok: false, error: asError(err) })));
  const groupOutcomes = await committed;
  for (let k = 0; k < groupOutcomes.length; k++) {
    const outcome = groupOutcomes[k] as BatchOutcome<WriteResult | null>;
    assert.ok(!outcome.ok || outcome.value !== null, 'a document change has a result');
    outcomes[groupedSlots[k] as number] = outcome as BatchOutcome<WriteResult>;
  }
  const laterOutcomes = await Promise.all(written);
  for (let k = 0; k < later.length; k++) outcomes[later[k] as number] = laterOutcomes[k] as BatchOutcome<WriteResult>;
  return outcomes;
}

async function mutateLocked(state: ShardState, id: DocumentId, key: string, decide: (current: StoredDocument | undefined) => Mutation,
  commit: boolean, schema: Record<string, unknown> | undefined, term: number | undefined, bulk: boolean): Promise<WriteResult> {
  // Checked again under the lock: a newer term may have arrived while the write waited.
  if (term !== undefined && term < state.position.term) throw engineErrors.stalePrimaryTerm(term, state.position.term);
  const epoch = state.stateEpoch;
  const current = await state.current(id, key);
  const change = prepareChange(id, key, current, decide(current), epoch, state.position.term);
  if (bulk) change.uncached = true;
  prepareTerms(state, change, schema);
  const result = await state.writer.submit(change, commit);
  assert.ok(result !== null, 'a document change has a result');
  return result;
}

/**
 * The schema a change is indexed with (recorded when newer than the stored
 * one) and a put's terms, computed before the change is queued: a body the
 * schema refuses (e.g. a patch giving a field another type) writes nothing.
 */
export function prepareTerms(state: ShardState, change: Change, schema: Record<string, unknown> | undefined): void {
  if (schema !== undefined && schema !== state.schema) {
    // The same schema in the caller's object (schemas are values, never mutated): keep that one, so the next
    // writes skip this comparison, indexing finds the caller's fold (indexedValues) and no copy is held.
    if (isDeepStrictEqual(schema, state.schema)) state.schema = schema;
    else change.schema = schema;
  }
  if (change.kind === 'put') {
    const indexSchema = change.schema ?? state.schema;
    // A bulk write's text is analysed on the analysis thread while the batch is written (commitBatch waits for
    // it); a single write's here, where it costs less than the hop to the thread and back.
    change.terms = state.index.prepare({ seq: 0, docid: 1, id: change.id, body: change.indexed ?? change.body, version: change.version }, indexSchema,
      state.analysisThread && change.uncached === true).document;
  }
}
