/**
 * Document IDs (API.md §1.2). The index records the `_id` type; the first
 * write fixes it from `_id: {_type}` in the body or from the ID text. Later
 * IDs are converted to that type (impossible → 400) and answered in it
 * (`PUT /t/1` → `"_id": 1`).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { canonicalUuid, isUuidString } from '@tessera/schema';
import { apiErrors } from '../errors.js';

export type IdType = 'integer' | 'positive' | 'float' | 'uuid' | 'keyword';
export type DocumentId = string | number;

const INTEGER = /^-?(0|[1-9]\d*)$/;
const DECIMAL = /^-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?$/;

const TYPE_ALIASES: Record<string, IdType> = {
  integer: 'integer', positive: 'positive', float: 'float', floating: 'float',
  uuid: 'uuid', keyword: 'keyword', term: 'keyword', text: 'keyword', string: 'keyword',
};

export function idTypeFromName(name: unknown): IdType {
  const type = typeof name === 'string' ? TYPE_ALIASES[name.toLowerCase()] : undefined;
  if (!type) throw apiErrors.badId(`Invalid _id type '${String(name)}'`);
  return type;
}

/** The type the first ID of an index fixes when no `_type` was given. */
export function detectIdType(text: string): IdType {
  if (isUuidString(text)) return 'uuid';
  if (INTEGER.test(text) && Number.isSafeInteger(Number(text))) return 'integer';
  if (DECIMAL.test(text) && Number.isFinite(Number(text))) return 'float';
  return 'keyword';
}

/** Convert an ID (path text or body value) to the index's ID type. */
export function convertId(value: unknown, type: IdType): DocumentId {
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || text.length === 0) throw apiErrors.badId(`Invalid document ID ${JSON.stringify(value)}`);
  switch (type) {
    case 'integer':
    case 'positive': {
      const n = Number(text);
      if (!INTEGER.test(text) || !Number.isSafeInteger(n)) throw apiErrors.badId(`Document ID '${text}' is not an integer`);
      if (type === 'positive' && n < 0) throw apiErrors.badId(`Document ID '${text}' is not a positive integer`);
      return n;
    }
    case 'float': {
      const n = Number(text);
      if (!DECIMAL.test(text) || !Number.isFinite(n)) throw apiErrors.badId(`Document ID '${text}' is not a number`);
      return n;
    }
    case 'uuid': {
      // Canonical lower case; Xapiand's condensed form kept verbatim.
      const uuid = canonicalUuid(text);
      if (uuid === undefined) throw apiErrors.badId(`Document ID '${text}' is not a UUID`);
      return uuid;
    }
    case 'keyword':
      return text;
  }
}

/** Canonical text of an ID: the routing hash input. */
export function idText(id: DocumentId): string {
  return typeof id === 'number' ? String(id) : id;
}

/**
 * A new ID for POST (§1.2): numeric types → 1 + the largest numeric ID ever
 * used; keyword → 22 URL-safe base64 characters (132 random bits); uuid → v4.
 */
export function generateId(type: IdType, largestNumericId: number): DocumentId {
  switch (type) {
    case 'integer':
    case 'positive':
      return Math.max(0, Math.floor(largestNumericId)) + 1;
    case 'float':
      return Math.floor(largestNumericId) + 1;
    case 'keyword':
      return randomBytes(17).toString('base64url').slice(0, 22);
    case 'uuid':
      return randomUUID();
  }
}
