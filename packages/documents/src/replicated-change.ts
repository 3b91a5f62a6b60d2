/**
 * A change as a replica receives it: the result of a write on the primary
 * (never the request: merges, patches and scripts ran there), or one
 * document of a full copy.
 */
import type { BlobBytes } from './blob-bytes.js';
import type { DocumentBody, DocumentId } from './document.js';

export interface ReplicatedChange {
  /** The primary's seq of the change, for the copy's position; absent for a document of a full copy. */
  seq?: number;
  id: DocumentId;
  version: number;
  deleted: boolean;
  /** The stored body (puts). */
  body?: DocumentBody;
  /** Where the version sits in the shard's history (engine replication/origin.ts). */
  originTerm: number;
  originSeq: number;
  /** The form indexed, when `_store: false` fields make it differ from `body`. */
  indexed?: DocumentBody;
  /** The put's stored content entries, in order; each carries its blob's bytes unless the copy is known to hold it. */
  content?: ReplicatedContent[];
}

/** A content entry of a replicated change: the blob by size and checksum, and its bytes when sent. */
export interface ReplicatedContent {
  type: string;
  size: number;
  crc: number;
  bytes?: BlobBytes;
}
