/**
 * Folding a `_schema` into an index's schema (API.md §7.1): new fields are
 * added, `_meta` is replaced, immutable properties of an existing field must
 * be equal (else 400). Idempotent: merging the same schema twice changes
 * nothing.
 */
import { isDeepStrictEqual } from 'node:util';
import { apiErrors } from '../errors.js';
import { isPlainObject } from '../documents/stored-form.js';

const IMMUTABLE = new Set([
  '_type', '_prefix', '_slot', '_accuracy', '_language', '_stem_language', '_namespace', '_partial_paths',
  '_index_uuid_field', '_foreign', '_positions',
]);

export type Schema = Record<string, unknown>;

export function mergeSchema(current: Schema, incoming: unknown, path = ''): Schema {
  if (!isPlainObject(incoming)) throw apiErrors.badBody(`'_schema${path ? `.${path}` : ''}' must be an object`);
  const out: Schema = { ...current };
  for (const [key, value] of Object.entries(incoming)) {
    if (key.length === 0 || key.startsWith('#')) continue;
    const where = path ? `${path}.${key}` : key;
    if (key.startsWith('_')) {
      if (key === '_meta' || !(key in current)) {
        out[key] = value;
      } else if (IMMUTABLE.has(key) && !isDeepStrictEqual(current[key], value)) {
        throw apiErrors.schemaImmutable(path || '_schema', key);
      } else {
        out[key] = value;
      }
      continue;
    }
    const existing = current[key];
    if (isPlainObject(value)) {
      out[key] = mergeSchema(isPlainObject(existing) ? existing : {}, value, where);
    } else {
      throw apiErrors.badBody(`Schema of field '${where}' must be an object of field options`);
    }
  }
  return out;
}
