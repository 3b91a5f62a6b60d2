/**
 * PATCH (API.md §5.4): RFC 6902 JSON Patch — add, remove, replace, move,
 * copy, test — with RFC 6901 pointers (`-` appends to an array), plus
 * Xapiand's `incr`/`decr`.
 *
 * Pure: the input document is deep-copied once and the operations run on the
 * copy, so a failure at operation k leaves the stored (and cached) document
 * untouched — a failed patch changes nothing. Any failure is a 400
 * `patch_failed` naming the operation's index.
 *
 * fast-json-patch applies the operations, but its own existence checks read
 * `obj[key]`, which sees inherited properties (`/toString` "exists" on `{}`).
 * So every pointer is first resolved here over own properties only, and the
 * library is called without its validator on an operation known to be valid.
 * `__proto__` and `constructor/prototype` stay banned by the library.
 */
import fastJsonPatch from 'fast-json-patch';
import { engineErrors } from '../errors.js';
import { cloneValue, isPlainObject } from './plain-object.js';
import type { DocumentBody } from './types.js';

const { applyOperation } = fastJsonPatch;

/** RFC 6901 array index: "0" or digits without a leading zero. */
const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/;
/** A `~` must be followed by 0 or 1 (RFC 6901 §3). */
const BAD_ESCAPE = /~(?:[^01]|$)/;

const MISSING: unique symbol = Symbol('missing');
type Resolved = unknown | typeof MISSING;

/** A failure inside one operation; becomes `patch_failed` with the operation's index. */
class StepError extends Error {}

export function applyDocumentPatch(body: DocumentBody, operations: unknown): DocumentBody {
  if (!Array.isArray(operations)) throw engineErrors.patchFailed('A JSON Patch must be an array of operations');
  let doc: unknown = cloneValue(body);
  for (let i = 0; i < operations.length; i++) {
    const operation: unknown = operations[i];
    try {
      doc = applyStep(doc, operation, i);
    } catch (err) {
      const op = isPlainObject(operation) && typeof operation.op === 'string' ? ` (${operation.op})` : '';
      // Library errors append the whole document to their message: keep the first line only.
      const why = err instanceof Error ? err.message.split('\n', 1)[0] : String(err);
      throw engineErrors.patchFailed(`Patch operation ${i}${op} failed: ${why}`);
    }
  }
  if (!isPlainObject(doc)) throw engineErrors.patchFailed('The patched document must be an object');
  return doc;
}

function applyStep(doc: unknown, operation: unknown, index: number): unknown {
  if (!isPlainObject(operation)) throw new StepError('an operation must be an object');
  const op = operation.op;
  if (typeof op !== 'string') throw new StepError("'op' must be a string");
  const path = operation.path;
  const tokens = parsePointer(path, 'path');
  const pathText = path as string;
  switch (op) {
    case 'add':
      return add(doc, tokens, pathText, cloneValue(required(operation, 'value')), index);
    case 'remove':
      if (tokens.length === 0) throw new StepError('cannot remove the whole document');
      expectExists(doc, tokens, pathText);
      return applyOperation(doc, { op: 'remove', path: pathText }, false, true, true, index).newDocument;
    case 'replace': {
      const value = cloneValue(required(operation, 'value'));
      if (tokens.length === 0) return value;
      expectExists(doc, tokens, pathText);
      return applyOperation(doc, { op: 'replace', path: pathText, value }, false, true, true, index).newDocument;
    }
    case 'test':
      expectExists(doc, tokens, pathText);
      // Throws "Test operation failed" when the values differ (deep comparison).
      return applyOperation(doc, { op: 'test', path: pathText, value: required(operation, 'value') }, false, true, true, index)
        .newDocument;
    case 'move': {
      const from = operation.from;
      const fromTokens = parsePointer(from, 'from');
      const fromText = from as string;
      const value = expectExists(doc, fromTokens, fromText);
      if (fromText === pathText) return doc;
      if (pathText.startsWith(`${fromText}/`)) throw new StepError(`cannot move '${fromText}' into itself`);
      const removed = applyOperation(doc, { op: 'remove', path: fromText }, false, true, true, index).newDocument;
      return add(removed, tokens, pathText, value, index);
    }
    case 'copy': {
      const from = operation.from;
      const value = expectExists(doc, parsePointer(from, 'from'), from as string);
      return add(doc, tokens, pathText, cloneValue(value), index);
    }
    case 'incr':
    case 'decr':
      return incrDecr(doc, tokens, pathText, op, operation, index);
    default:
      throw new StepError(`unknown operation '${op}'`);
  }
}

/**
 * `incr`/`decr`: add or subtract `value` (a number) to the number at `path`.
 * With `limit`, the operation fails if the result *reaches* the limit
 * (API.md §5.4), as Xapiand does (msgpack_patcher `_incr_decr`): moving up
 * (incr by a positive value, decr by a negative one) fails when
 * result >= limit; moving down fails when result <= limit. So `limit` is an
 * exclusive bound: `{op: "incr", value: 1, limit: 100}` lets a counter go up
 * to 99.
 */
function incrDecr(doc: unknown, tokens: string[], path: string, op: 'incr' | 'decr',
  operation: Record<string, unknown>, index: number): unknown {
  const value = operation.value;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new StepError("'value' must be a number");
  const limit = operation.limit;
  if (limit !== undefined && (typeof limit !== 'number' || !Number.isFinite(limit))) {
    throw new StepError("'limit' must be a number");
  }
  if (tokens.length === 0) throw new StepError('the document itself is not a number');
  const current = expectExists(doc, tokens, path);
  if (typeof current !== 'number') throw new StepError(`the value at '${path}' is not a number`);
  const step = op === 'incr' ? value : -value;
  const result = current + step;
  if (!Number.isFinite(result)) throw new StepError('the result is not a finite number');
  if (limit !== undefined && (step < 0 ? result <= limit : result >= limit)) {
    throw new StepError(`the result ${result} reaches the limit ${limit}`);
  }
  return applyOperation(doc, { op: 'replace', path, value: result }, false, true, true, index).newDocument;
}

function add(doc: unknown, tokens: string[], path: string, value: unknown, index: number): unknown {
  if (tokens.length === 0) return value;
  const parent = resolve(doc, tokens, tokens.length - 1);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) {
    if (last !== '-' && !(ARRAY_INDEX.test(last) && Number(last) <= parent.length)) {
      throw new StepError(`'${last}' is not an index of the array at '${path}' (length ${parent.length})`);
    }
  } else if (!isPlainObject(parent)) {
    throw new StepError(parent === MISSING
      ? `the parent of '${path}' does not exist`
      : `the parent of '${path}' is not an object or an array`);
  }
  return applyOperation(doc, { op: 'add', path, value }, false, true, true, index).newDocument;
}

function required(operation: Record<string, unknown>, member: string): unknown {
  const value = operation[member];
  if (value === undefined) throw new StepError(`'${member}' is required`);
  return value;
}

function expectExists(doc: unknown, tokens: string[], path: string): unknown {
  const value = resolve(doc, tokens, tokens.length);
  if (value === MISSING) throw new StepError(`'${path}' does not exist`);
  return value;
}

/** Walk `tokens[0..end)` over own properties and in-range array indexes only. */
function resolve(doc: unknown, tokens: string[], end: number): Resolved {
  let node = doc;
  for (let t = 0; t < end; t++) {
    const token = tokens[t];
    if (Array.isArray(node)) {
      if (!ARRAY_INDEX.test(token)) return MISSING;
      const i = Number(token);
      if (i >= node.length) return MISSING;
      node = node[i];
    } else if (isPlainObject(node)) {
      if (!Object.hasOwn(node, token)) return MISSING;
      node = node[token];
    } else {
      return MISSING;
    }
  }
  return node;
}

/** RFC 6901: "" is the whole document; otherwise "/"-separated tokens with ~1 → "/" and ~0 → "~". */
function parsePointer(pointer: unknown, member: 'path' | 'from'): string[] {
  if (typeof pointer !== 'string') throw new StepError(`'${member}' must be a string`);
  if (pointer === '') return [];
  if (pointer[0] !== '/') throw new StepError(`'${member}' must be empty or start with '/'`);
  const tokens = pointer.slice(1).split('/');
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (token.includes('~')) {
      if (BAD_ESCAPE.test(token)) throw new StepError(`'${member}' has an invalid '~' escape`);
      tokens[i] = token.replace(/~1/g, '/').replace(/~0/g, '~');
    }
  }
  return tokens;
}
