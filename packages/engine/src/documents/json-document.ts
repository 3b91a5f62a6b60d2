/**
 * The form the document cache keeps of a stored document: its body as one
 * compact JSON string instead of the decoded object graph. A full collection
 * marks every object the cache holds: a small document decoded was ~690
 * bytes of heap in dozens of objects, and 133k of them made full GCs of
 * 120–430 ms under a PUT load (docs/operations.md "Write tails"); a string is
 * one object, never traversed. What reads an entry needs, each in its
 * cheapest form: a GET or a search hit sends the text as it is
 * (DocumentReply/SearchHitReply.bodyJson, no decode, no encode), a version
 * check or a PUT over it reads only the numbers, and a write merging into
 * the document (UPDATE, PATCH, a script) or a highlighter parses the body.
 */
import type { DocumentBody, DocumentId, StoredDocument } from './types.js';

/** A stored document whose body is kept as its JSON: `body` is parsed on each use and never kept. */
export class JsonDocument implements StoredDocument {
  constructor(
    readonly id: DocumentId,
    readonly docid: number,
    readonly version: number,
    readonly seq: number,
    readonly bodyJson: string,
    readonly term: number | undefined,
    readonly originSeq: number | undefined,
  ) {}

  get body(): DocumentBody {
    return JSON.parse(this.bodyJson) as DocumentBody;
  }
}

/**
 * `doc` as the cache keeps it: a JsonDocument when its JSON gives the body
 * back exactly; else (stored content entries, an indexed form, a body JSON
 * cannot carry: binary, -0, a BigInt) the decoded document itself.
 */
export function cachedForm(doc: StoredDocument): StoredDocument {
  if (doc.bodyJson !== undefined || doc.content !== undefined || doc.indexed !== undefined || !jsonFaithful(doc.body)) return doc;
  return new JsonDocument(doc.id, doc.docid, doc.version, doc.seq, JSON.stringify(doc.body), doc.term, doc.originSeq);
}

/**
 * Whether JSON carries `value` exactly: plain objects and arrays of strings,
 * booleans, null and finite numbers other than -0 (a MessagePack body may
 * hold binary, which JSON would turn into an object of its bytes).
 */
export function jsonFaithful(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0);
  if (typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.every(jsonFaithful);
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key in value) if (!jsonFaithful((value as Record<string, unknown>)[key])) return false;
  return true;
}
