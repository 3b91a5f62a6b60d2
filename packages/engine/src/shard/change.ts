/**
 * A change on its way to the batch writer (shard/batch.ts): what a write,
 * a replicated change or a barrier hands over, and how a Mutation decided
 * on the current document becomes one.
 */
import type { ContentLink, DocumentBody, DocumentId, Mutation, StoredDocument } from '../documents/types.js';
import { isPlainObject } from '../documents/plain-object.js';
import { engineErrors } from '../errors.js';
import type { IndexableDocument } from '../segments/index.js';
import { documentKey } from '../store/keys.js';
import { encodeBody } from '../store/records.js';

/** What one write hands to the batch writer; `barrier` carries no change (commit(), recovery). */
export interface Change {
  readonly kind: 'put' | 'delete' | 'barrier';
  /** In-memory ID key (documents/document-id.ts). */
  readonly key: string;
  readonly id: DocumentId;
  readonly documentKey: Buffer;
  /** The new version (a delete's too: replicas apply only newer versions). */
  readonly version: number;
  /** The document's #docid; 0 for a put that creates it (assigned in the batch). */
  readonly docid: number;
  /** The primary term the version is written in. */
  readonly originTerm: number;
  /** The primary's seq, for a replicated change (a copy's own writes take the seq the batch assigns). */
  readonly originSeq?: number | undefined;
  readonly body: DocumentBody | undefined;
  readonly bodyBytes: Uint8Array | undefined;
  /** A put's stored content entries (undefined or empty: none). */
  readonly content?: readonly ContentLink[] | undefined;
  /** A put's indexed form, when `_store: false` fields make it differ from `body`. */
  readonly indexed?: DocumentBody | undefined;
  /** `stateEpoch` when the current document was read (see `recover`). */
  readonly epoch: number;
  /** A put's terms and values, computed before the write is queued (a schema 400 writes nothing). */
  terms?: IndexableDocument | null;
  /**
   * The schema the terms were computed with, when it differs from the stored one: the caller's object itself
   * (schemas are values, never mutated), which the shard keeps once the batch is written, so the copies of an
   * index hold the coordinator's schema rather than one copy each.
   */
  schema?: Record<string, unknown>;
  /** A bulk load's: not put in the document cache once written, text analysed on the analysis thread. */
  uncached?: boolean;
  /** A barrier whose batch is synced in LevelDB itself, not through the node's commit log (store/commit-log.ts). */
  readonly storeSync?: true;
}

/** A change that carries nothing: a batch to sync (commit()), persist the position or run the recovery. */
export const BARRIER: Change = {
  kind: 'barrier', key: '', id: '', documentKey: Buffer.alloc(0), version: 0, docid: 0, originTerm: 0, body: undefined, bodyBytes: undefined, epoch: -1,
};

/** A barrier that syncs the copy's LevelDB: the commit log may then drop the copy's records (a checkpoint, a close). */
export const STORE_SYNC: Change = { ...BARRIER, storeSync: true };

export function prepareChange(id: DocumentId, key: string, current: StoredDocument | undefined, mutation: Mutation, epoch: number, term: number): Change {
  if (mutation.kind === 'delete') {
    if (current === undefined) throw engineErrors.documentNotFound();
    return {
      kind: 'delete', key, id: current.id, documentKey: documentKey(current.id), version: current.version + 1, docid: current.docid,
      originTerm: term, body: undefined, bodyBytes: undefined, epoch,
    };
  }
  if (mutation.kind !== 'put') throw engineErrors.invalidWrite(`unknown mutation '${String((mutation as { kind: unknown }).kind)}'`);
  if (!isPlainObject(mutation.body)) throw engineErrors.invalidDocument('A document must be an object');
  const bodyBytes = encodeDocument(mutation.body);
  // -0 and 0 are one document (one key); store the canonical one.
  const storedId = current?.id ?? (id === 0 ? 0 : id);
  const version = (current?.version ?? 0) + 1;
  return {
    kind: 'put', key, id: storedId, documentKey: documentKey(storedId), version, docid: current?.docid ?? 0,
    originTerm: term, body: mutation.body, bodyBytes, content: mutation.content, indexed: mutation.indexed, epoch,
  };
}

/**
 * `fields` with a put's content entries and indexed form, where there are
 * any (a plain document's records, results and log entries keep their shape).
 */
export function withExtras<T extends object>(fields: T, change: Change): T & { content?: readonly ContentLink[]; indexed?: DocumentBody } {
  const out: T & { content?: readonly ContentLink[]; indexed?: DocumentBody } = fields;
  if (change.content !== undefined && change.content.length > 0) out.content = change.content;
  if (change.indexed !== undefined) out.indexed = change.indexed;
  return out;
}

/** A record or oplog entry with the change's origin, where it is not the default (store/records.ts). */
export function withOrigin<T extends { seq: number }>(fields: T, change: Change): T & { term?: number; originSeq?: number } {
  const out: T & { term?: number; originSeq?: number } = fields;
  if (change.originTerm !== 1) out.term = change.originTerm;
  if (change.originSeq !== undefined && change.originSeq !== fields.seq) out.originSeq = change.originSeq;
  return out;
}

/** A body's stored bytes; 400 `invalid_document` for one msgpack cannot encode. */
export function encodeDocument(body: DocumentBody): Uint8Array {
  try {
    return encodeBody(body);
  } catch (err) {
    throw engineErrors.invalidDocument(`Document cannot be stored: ${err instanceof Error ? err.message : String(err)}`, err);
  }
}
