/**
 * What a document write (`Shard.write`) decides, given the current document:
 * the version check (API.md §5.6), then index / update / patch / delete
 * (§5.1, §5.3–5.5), then the write's script (§11.1: after the merge, before
 * indexing). It runs inside the shard's per-document lock and either returns
 * the Mutation to store or throws a TesseraError, in which case nothing is
 * written. Only the primary decides: replicas receive the result.
 *
 * A script or a JSON Patch may add fields. Its result is folded against the
 * index schema the write carries; if that would grow the schema, the write is
 * refused with `script_schema_change`, carrying the result, so that the
 * coordinator folds it into the index schema (cluster state) and writes
 * again: shards never type a field on their own.
 */
import type { ScriptRunner } from '@tessera/scripting';
import { foldDocument, type Schema } from '@tessera/schema';
import { blobLength, isBlobBytes, mediaTypeOf } from '@tessera/documents';
import { engineErrors } from '../errors.js';
import { mergeDocument } from './merge.js';
import { applyDocumentPatch } from './patch.js';
import { isPlainObject } from './plain-object.js';
import type { ContentLink, ContentWrite, DocumentBody, Mutation, StoredDocument, WriteRequest, WriteScript } from './types.js';

/** What a scripted write needs besides the request: the process's script runner and the schema to fold its result with. */
export interface WriteContext {
  scripts?: ScriptRunner | undefined;
  /** The index schema the result is checked against (the write's own, else the shard's). */
  schema?: Schema | undefined;
  /** The write carried the index schema (a coordinator's write): a patch's result is checked against it too. */
  schemaFromWrite?: boolean;
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
  if (req.indexed !== undefined && !isPlainObject(req.indexed)) throw engineErrors.invalidDocument('An indexed form must be an object');
  if (req.script !== undefined) validateScript(req.script);
  if (req.content !== undefined) validateContentWrite(req.content, req.op);
}

/** Longest media type kept as a content entry's type (RFC 6838 names are at most 127 + 1 + 127 characters). */
const CONTENT_TYPE_LENGTH_MAX = 255;

function validateContentWrite(content: ContentWrite, op: WriteRequest['op']): void {
  if (!isPlainObject(content)) throw engineErrors.invalidWrite('content must be an object');
  if (typeof content.type !== 'string' || content.type.length === 0 || content.type.length > CONTENT_TYPE_LENGTH_MAX) {
    throw engineErrors.invalidWrite(`a content type must be a string of 1 to ${CONTENT_TYPE_LENGTH_MAX} characters`);
  }
  if (!isBlobBytes(content.bytes)) throw engineErrors.invalidWrite('content bytes must be binary');
  if (op !== 'index' && op !== 'update') throw engineErrors.invalidWrite(`content cannot be written by '${op}'`);
  if (op === 'index' && blobLength(content.bytes) === 0) throw engineErrors.invalidWrite('an index of content needs bytes (an empty body unlinks, with UPDATE)');
}

/**
 * The content entries after a content write (API.md §6): the entry of that
 * media type goes (re-storing moves it to the end, unlinking removes it),
 * then the new link, if any, becomes the last entry — the default.
 */
export function relinkContent(current: readonly ContentLink[] | undefined, type: string, stored: ContentLink | undefined): ContentLink[] {
  const bare = mediaTypeOf(type);
  const kept = (current ?? []).filter((link) => mediaTypeOf(link.type) !== bare);
  if (stored !== undefined) kept.push(stored);
  return kept;
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

/**
 * `stored` is the blob of a content write, appended to the volumes before
 * the document's lock was taken (undefined for an unlink).
 */
export function decideWrite(req: WriteRequest, current: StoredDocument | undefined, context: WriteContext = {},
  stored?: ContentLink): Mutation {
  const mutation = req.content === undefined ? decideChange(req, current) : decideContentChange(req, req.content, current, stored);
  if (req.script !== undefined) return runScript(req.script, current, mutation, context);
  // A patch's fields reach the shard unseen by the coordinator's fold (its body is the operations).
  if (req.op === 'patch' && mutation.kind === 'put' && context.schemaFromWrite === true) foldedResult(mutation.body, context, 'patch');
  return mutation;
}

/** A content write keeps the body (UPDATE) or empties it (PUT: the document is replaced, §6). */
function decideContentChange(req: WriteRequest, content: ContentWrite, current: StoredDocument | undefined,
  stored: ContentLink | undefined): Mutation {
  checkExpectedVersions(req.expectedVersions, current);
  if (req.op === 'index') return { kind: 'put', body: {}, content: relinkContent(undefined, content.type, stored) };
  if (current === undefined && !req.upsert) throw engineErrors.documentNotFound();
  return { kind: 'put', body: current?.body ?? {}, content: relinkContent(current?.content, content.type, stored), indexed: current?.indexed };
}

function decideChange(req: WriteRequest, current: StoredDocument | undefined): Mutation {
  checkExpectedVersions(req.expectedVersions, current);
  const body: DocumentBody = req.body ?? {};
  switch (req.op) {
    case 'index':
      // PUT replaces the whole document, stored content included (§5.1).
      return { kind: 'put', body, indexed: req.indexed };
    case 'update':
      if (current === undefined) {
        if (!req.upsert) throw engineErrors.documentNotFound();
        return { kind: 'put', body, indexed: req.indexed };
      }
      return {
        kind: 'put', body: mergeDocument(current.body, body), content: current.content,
        // Unstored fields stay indexed until a write gives them new values.
        indexed: current.indexed === undefined && req.indexed === undefined ? undefined : mergeDocument(current.indexed ?? current.body, req.indexed ?? body),
      };
    case 'patch': {
      if (current === undefined && !req.upsert) throw engineErrors.documentNotFound();
      const patched = applyDocumentPatch(current?.body ?? {}, req.patch);
      return { kind: 'put', body: patched, content: current?.content, indexed: current?.indexed === undefined ? undefined : patchIndexed(current.indexed, req.patch, patched) };
    }
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
  return { kind: 'put', body: foldedResult(result, context, 'script').stored, content: mutation.content };
}

/** A result folded against the write's schema; refused with its body when it would grow the schema (see above). */
function foldedResult(result: DocumentBody, context: WriteContext, by: 'script' | 'patch'): { stored: DocumentBody } {
  const folded = foldDocument(context.schema ?? {}, result);
  if (folded.changed) throw engineErrors.resultSchemaChange(result, by);
  return folded.document;
}

/**
 * A patch applied to the indexed form too, so unstored fields stay indexed;
 * a patch that only fits the stored form (it tests or moves an unstored
 * path) re-indexes from the stored form.
 */
function patchIndexed(indexed: DocumentBody, patch: unknown[] | undefined, patched: DocumentBody): DocumentBody {
  try {
    return applyDocumentPatch(indexed, patch);
  } catch {
    return patched;
  }
}
