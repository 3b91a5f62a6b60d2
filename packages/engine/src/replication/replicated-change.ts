/**
 * A change as a replica receives it: the result of a write on the primary
 * (never the request: merges, patches and scripts ran there), or one
 * document of a full copy.
 */
import { blobLength, isBlobBytes, type ReplicatedChange } from '@tessera/documents';
import { validateDocumentId } from '../documents/document-id.js';
import { isPlainObject } from '../documents/plain-object.js';
import { engineErrors } from '../errors.js';

export type { ReplicatedChange, ReplicatedContent } from '@tessera/documents';

export interface ReplicateOutcome {
  /** Changes stored (or deletions recorded). */
  applied: number;
  /** Changes older than what the copy holds, left out. */
  discarded: number;
}

/** Changes per replicate call at most: one call's documents are held in memory at once. */
export const REPLICATE_CHANGES_MAX = 10_000;

export function validateTerm(term: unknown, what = 'term'): asserts term is number {
  if (!Number.isSafeInteger(term) || (term as number) < 1) throw engineErrors.invalidWrite(`${what} must be a positive integer`);
}

export function validateReplicatedChanges(changes: unknown): asserts changes is ReplicatedChange[] {
  if (!Array.isArray(changes)) throw engineErrors.invalidWrite('replicated changes must be an array');
  if (changes.length > REPLICATE_CHANGES_MAX) throw engineErrors.invalidWrite(`at most ${REPLICATE_CHANGES_MAX} changes per call`);
  for (const change of changes as unknown[]) {
    if (!isPlainObject(change)) throw engineErrors.invalidWrite('a replicated change must be an object');
    validateDocumentId(change.id);
    if (!Number.isSafeInteger(change.version) || (change.version as number) < 1) throw engineErrors.invalidWrite('version must be a positive integer');
    if (change.seq !== undefined && (!Number.isSafeInteger(change.seq) || (change.seq as number) < 1)) {
      throw engineErrors.invalidWrite('seq must be a positive integer');
    }
    validateTerm(change.originTerm, 'originTerm');
    if (!Number.isSafeInteger(change.originSeq) || (change.originSeq as number) < 1) throw engineErrors.invalidWrite('originSeq must be a positive integer');
    if (typeof change.deleted !== 'boolean') throw engineErrors.invalidWrite('deleted must be a boolean');
    if (!change.deleted && !isPlainObject(change.body)) throw engineErrors.invalidDocument('A replicated document must be an object');
    if (change.content !== undefined) validateReplicatedContent(change.content);
    if (change.indexed !== undefined && !isPlainObject(change.indexed)) throw engineErrors.invalidDocument('A replicated indexed form must be an object');
  }
}

function validateReplicatedContent(content: unknown): void {
  if (!Array.isArray(content)) throw engineErrors.invalidWrite('replicated content must be an array');
  for (const entry of content as unknown[]) {
    if (!isPlainObject(entry) || typeof entry.type !== 'string' || entry.type.length === 0) {
      throw engineErrors.invalidWrite('a replicated content entry needs a type');
    }
    if (!Number.isSafeInteger(entry.size) || (entry.size as number) < 0) throw engineErrors.invalidWrite('content size must be a non-negative integer');
    if (!Number.isInteger(entry.crc) || (entry.crc as number) < 0 || (entry.crc as number) > 0xffffffff) throw engineErrors.invalidWrite('content crc must be a 32-bit unsigned integer');
    if (entry.bytes !== undefined && (!isBlobBytes(entry.bytes) || blobLength(entry.bytes) !== entry.size)) {
      throw engineErrors.invalidWrite('content bytes must be binary of the given size');
    }
  }
}
