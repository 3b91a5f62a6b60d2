/**
 * What a document write (`Shard.write`) decides, given the current document:
 * the version check (API.md §5.6), then index / update / patch / delete
 * (§5.1, §5.3–5.5), then the write's script (§11.1: after the merge, before
 * indexing). It runs inside the shard's per-document lock and either returns
 * the Mutation to store or throws a TesseraError, in which case nothing is
 * written. Only the primary decides: replicas receive the result.
 *
 * A script may add fields. Its result is folded against the index schema the
 * write carries; if that would grow the schema, the write is refused with
 * `script_schema_change`, carrying the result, so that the coordinator folds
 * it into the index schema (cluster state) and writes again: shards never
 * type a field on their own.
 */
import type { ScriptRunner } from '@tessera/scripting';
import { foldDocument, type Schema } from '@tessera/schema';
import { engineErrors } from '../errors.js';
import { mergeDocument } from './merge.js';
import { applyDocumentPatch } from './patch.js';
import { isPlainObject } from './plain-object.js';
import type { DocumentBody, Mutation, StoredDocument, WriteRequest, WriteScript } from './types.js';

/** What a scripted write needs besides the request: the process's script runner and the schema to fold its result with. */
export interface WriteContext {
  scripts?: ScriptRunner | undefined;
  /** The index schema the result is checked against (the write's own, else the shard's). */
  schema?: Schema | undefined;
}

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
  if (req.script !== undefined) validateScript(req.script);
}

function validateScript(script: WriteScript): void {
  if (!isPlainObject(script)) throw engineErrors.invalidWrite('a script must be an object');
  if (typeof script.body !== 'string') throw engineErrors.invalidWrite('a script body must be a string');
  if (typeof script.method !== 'string') throw engineErrors.invalidWrite('a script method must be a string');
  if (script.name !== undefined && typeof script.name !== 'string') throw engineErrors.invalidWrite('a script name must be a string');
  if (script.params !== undefined && !isPlainObject(script.params)) throw engineErrors.invalidWrite('script parameters must be an object');
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

export function decideWrite(req: WriteRequest, current: StoredDocument | undefined, context: WriteContext = {}): Mutation {
  const mutation = decideChange(req, current);
  return req.script === undefined ? mutation : runScript(req.script, current, mutation, context);
}

function decideChange(req: WriteRequest, current: StoredDocument | undefined): Mutation {
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

/**
 * Run the write's script on the decided change: `_doc` is the document to
 * store (a delete's is `{}`: the script can only refuse it, by failing),
 * `_old_doc` the stored one. The result is the stored form of what the
 * script left, folded against the schema.
 */
function runScript(script: WriteScript, current: StoredDocument | undefined, mutation: Mutation, context: WriteContext): Mutation {
  const scripts = context.scripts;
  if (scripts === undefined) throw engineErrors.scriptsUnavailable();
  const oldDoc = current?.body;
  // Literals, not a spread of a shared object: measured 2 µs a write on V8 (Node 20).
  if (mutation.kind === 'delete') {
    scripts.run({ body: script.body, name: script.name, params: script.params, doc: {}, oldDoc, method: script.method });
    return mutation;
  }
  const result = scripts.run({ body: script.body, name: script.name, params: script.params, doc: mutation.body, oldDoc, method: script.method });
  const folded = foldDocument(context.schema ?? {}, result);
  if (folded.changed) throw engineErrors.scriptSchemaChange(result);
  return { kind: 'put', body: folded.document.stored };
}
