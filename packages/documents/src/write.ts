/** A document write as the coordinator routes it to the primary copy, and what the primary answers. */
import type { BlobBytes } from './blob-bytes.js';
import type { ContentLink, DocumentBody, DocumentId } from './document.js';

export type WriteOp = 'index' | 'update' | 'patch' | 'delete';

/** High-level document write, as the coordinator routes it to the primary copy. */
export interface WriteRequest {
  op: WriteOp;
  id: DocumentId;
  /** index: the new body; update: partial body merged recursively; patch: ignored (see `patch`). */
  body?: DocumentBody;
  /** `body` with its `_store: false` fields kept (the coordinator's fold): indexed instead of `body`. */
  indexed?: DocumentBody;
  /** patch: RFC 6902 operations plus `incr`/`decr` (API.md §5.4). */
  patch?: unknown[];
  /** Each given expected version must equal the current one (0 = must not exist). */
  expectedVersions?: number[];
  /** update/patch: create when absent. */
  upsert?: boolean;
  /** Reply only once durable (sync write). */
  commit?: boolean;
  /**
   * Part of a bulk load (RESTORE): the written document is not put in the document cache, where it would push out
   * documents being read, and its text is analysed on the analysis thread while its batch is written.
   */
  bulk?: boolean;
  /** The index schema (cluster state) to index the result with. */
  schema?: Record<string, unknown>;
  /** The shard's primary term the coordinator writes under: refused when older than one this copy has seen. */
  term?: number;
  /** A script to run after the merge and before indexing (API.md §11), resolved by the coordinator. */
  script?: WriteScript;
  /**
   * Stored content (API.md §6), with op `index` (the document becomes `{}`
   * plus this one entry) or `update` (the entry of that type is replaced or
   * added, the body and other entries kept; empty `bytes` unlinks the type).
   */
  content?: ContentWrite;
}

/** A blob to store under a media type; empty bytes on an update unlink that type. */
export interface ContentWrite {
  type: string;
  bytes: BlobBytes;
}

/** A write's script: its source and parameters, as the coordinator resolved them (named, foreign, index default). */
export interface WriteScript {
  body: string;
  params?: Record<string, unknown>;
  /** Its name, when it has one (error messages). */
  name?: string;
  /** `_method`: the HTTP method of the request (PUT, POST, UPDATE, UPSERT, PATCH, DELETE). */
  method: string;
}

export interface WriteResult {
  id: DocumentId;
  docid: number;
  version: number;
  seq: number;
  /** The stored body after the write (absent for deletes). Shared with the document cache: never mutate it. */
  body?: DocumentBody;
  /** The content entries after the write, when the document has any. */
  content?: readonly ContentLink[];
  /** The form indexed, when it differs from `body` (`_store: false` fields). */
  indexed?: DocumentBody;
  deleted: boolean;
}
