/**
 * The stored form (API.md §5.7) of what the fold does not type: values under
 * `_ignore`, unknown under `_dynamic: false` or fixing no type, `_recurse:
 * false` subtrees and opaque objects. Option objects are unwrapped, options
 * and comments removed, and `_store: false` values left out (DROP).
 */
import { isOpaque } from './document-object.js';
import { schemaErrors } from './errors.js';
import { GEO_VALUE_KEYS } from './geo.js';
import { DATE_VALUE_KEYS, FIELD_OPTION_KEYS, hasOwn, isCommentKey, isPlainObject, VALUE_KEYS } from './keys.js';

/** Marks a value left out of the stored form (`_store: false`). */
export const DROP: unique symbol = Symbol('drop');
export type Stored = unknown;

/** An opaque object (document-object.ts isOpaque) as stored: options removed; unknown `_` keys → 400. */
export function opaque(obj: Record<string, unknown>, store: boolean): Stored | typeof DROP {
  for (const key of Object.keys(obj)) {
    if (key.charCodeAt(0) === 0x5f && !FIELD_OPTION_KEYS.has(key) && !VALUE_KEYS.has(key)) throw schemaErrors.unknownReservedKey(key);
  }
  return store ? withoutKeys(obj, FIELD_OPTION_KEYS) : DROP;
}

/** A copy of `obj` without comments and the keys in `sets`. */
export function withoutKeys(obj: Record<string, unknown>, ...sets: ReadonlyArray<ReadonlySet<string>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (isCommentKey(k) || sets.some((s) => s.has(k))) continue;
    out[k] = v;
  }
  return out;
}

/** `_recurse: false`: kept as sent, options and comments of the top object removed. */
export function verbatim(raw: unknown): Stored {
  if (!isPlainObject(raw)) return raw;
  if (hasOwn(raw, '_value')) return raw._value;
  return withoutKeys(raw, FIELD_OPTION_KEYS);
}

/**
 * Stored form of a value that is neither typed nor indexed (under `_ignore`,
 * unknown under `_dynamic: false`, or fixing no type): option objects
 * unwrapped, options and comments removed, `_store: false` dropped.
 */
export function plainStored(value: unknown, store: boolean): Stored | typeof DROP {
  if (!store) return DROP;
  if (Array.isArray(value)) {
    // Copied only from the first item that changes: a list stored as it came is the input's own (never mutated).
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const r = plainStored(item, true);
      if (out === undefined) {
        if (r === item) continue;
        out = value.slice(0, i);
      }
      if (r !== DROP) out.push(r);
    }
    return out ?? value;
  }
  if (!isPlainObject(value)) return value;
  if (value._store === false) return DROP;
  if (isOpaque(value)) return opaque(value, true);
  if (value._recurse === false) return verbatim(value);
  if (hasOwn(value, '_value')) {
    for (const key of Object.keys(value)) {
      if (key !== '_value' && key.charCodeAt(0) === 0x5f && !FIELD_OPTION_KEYS.has(key)) throw schemaErrors.unknownReservedKey(key);
    }
    return plainStored(value._value, true);
  }
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (isCommentKey(key)) continue;
    if (key.charCodeAt(0) === 0x5f) {
      if (FIELD_OPTION_KEYS.has(key)) continue;
      if (DATE_VALUE_KEYS.has(key) || GEO_VALUE_KEYS.has(key)) {
        out[key] = child;
        continue;
      }
      throw schemaErrors.unknownReservedKey(key);
    }
    const r = plainStored(child, true);
    if (r !== DROP) out[key] = r;
  }
  return out;
}
