/**
 * Document IDs in memory: validation, and the string key the per-document
 * locks and the document cache use. The key is type-tagged like the LevelDB
 * key (store/keys.ts), so numeric 1 (`n1`) and string "1" (`s1`) never share
 * a lock or a cache entry.
 */
import { engineErrors } from '../errors.js';
import type { DocumentId } from './types.js';

export function validateDocumentId(id: unknown): asserts id is DocumentId {
  if (typeof id === 'string') return;
  if (typeof id === 'number') {
    if (!Number.isFinite(id)) throw engineErrors.invalidDocumentId('a numeric ID must be finite');
    return;
  }
  throw engineErrors.invalidDocumentId('an ID must be a string or a number');
}

export function documentIdKey(id: DocumentId): string {
  // String(-0) is "0": -0 and 0 are one document, as in the LevelDB key.
  return typeof id === 'number' ? `n${id}` : `s${id}`;
}
