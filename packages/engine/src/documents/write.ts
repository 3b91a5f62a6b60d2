/**
 * What a document write (`Shard.write`) decides, given the current document:
 * the version check (API.md §5.6), then index / update / patch / delete
 * (§5.1, §5.3–5.5). Pure: it runs inside the shard's per-document lock and
 * either returns the Mutation to store or throws a TesseraError, in which case
 * nothing is written.
 */
import { engineErrors } from '../errors.js';
import { mergeDocument } from './merge.js';
import { applyDocumentPatch } from './patch.js';
import { isPlainObject } from './plain-object.js';
import type { DocumentBody, Mutation, StoredDocument, WriteRequest } from './types.js';

const WRITE_OPS: ReadonlySet<string> = new Set(['index', 'update', 'patch', 'delete']);

/** Shape checks done before the write is queued behind the document's lock. */
export function validateWriteRequest(req: WriteRequest): void {
  if (!WRITE_OPS.has(req.op)) throw engineErrors.invalidWrite(`unknown operation '${String(req.op)}'`);
  if (req.expectedVersions !== undefined) {
    if (!Array.isArray(req.expectedVersions)) throw engineErrors.invalidWrite('expected versions must be an array');
    for (const v of req.expectedVersions) {
      if (!Number.isSafeInteger(v) || v < 0) throw engineErrors.invalidWrite(`expected version ${String(v)} is not a non-negative integer`);
    }
  }
  if (req.body !== undefined && !isPlainObject(req.body)) throw engineErrors.invalidDocument('A document must be an object');
}

/**
 * Every given expected version must match (§5.6): 0 means "must not exist";
 * a non-zero version for a missing document is a conflict too (409 before 404).
 */
export function checkExpectedVersions(expected: readonly number[] | undefined, current: StoredDocument | undefined): void {
  if (expected === undefined) return;
  for (const version of expected) {
    if (version === 0 ? current !== undefined : current === undefined || current.version !== version) {
      throw engineErrors.versionConflict();
    }
  }
}

export function decideWrite(req: WriteRequest, current: StoredDocument | undefined): Mutation {
  checkExpectedVersions(req.expectedVersions, current);
  const body: DocumentBody = req.body ?? {};
  switch (req.op) {
    case 'index':
      return { kind: 'put', body };
    case 'update':
      if (current === undefined) {
        if (!req.upsert) throw engineErrors.documentNotFound();
        return { kind: 'put', body };
      }
      return { kind: 'put', body: mergeDocument(current.body, body) };
    case 'patch':
      if (current === undefined && !req.upsert) throw engineErrors.documentNotFound();
      return { kind: 'put', body: applyDocumentPatch(current?.body ?? {}, req.patch) };
    case 'delete':
      if (current === undefined) throw engineErrors.documentNotFound();
      return { kind: 'delete' };
  }
}
