/**
 * UPDATE's merge (API.md §5.3, DESIGN "Writes"): where the old and the new
 * value are both plain objects they merge key by key, recursively; otherwise
 * (scalar, array, null) the new value replaces the old.
 *
 * Pure: neither input is modified. The result shares unchanged subtrees with
 * both inputs (structural sharing), which is safe because stored documents are
 * never mutated in place. Only own properties are read and created, so a
 * `__proto__` key stays an ordinary field.
 */
import { getOwn, isPlainObject, setOwn } from './plain-object.js';
import type { DocumentBody } from './types.js';

export function mergeDocument(base: DocumentBody, partial: DocumentBody): DocumentBody {
  return mergeObjects(base, partial);
}

function mergeObjects(base: Record<string, unknown>, partial: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(base)) setOwn(out, key, base[key]);
  for (const key of Object.keys(partial)) {
    const next = partial[key];
    // `undefined` is "absent" (as in JSON): it neither replaces nor adds a field.
    if (next === undefined) continue;
    const previous = getOwn(out, key);
    setOwn(out, key, isPlainObject(previous) && isPlainObject(next) ? mergeObjects(previous, next) : next);
  }
  return out;
}
