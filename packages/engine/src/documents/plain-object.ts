/**
 * Plain-object helpers shared by the document transforms (merge, patch). A
 * document is a tree of plain objects, arrays and scalars (plus Uint8Array and
 * Date, which the msgpack codec round-trips); these helpers only ever create
 * own properties, so no key (not even `__proto__`) can reach a prototype.
 */

import { isPlainObject } from '@tessera/documents';

export { isPlainObject };

/**
 * `target[key] = value` as an own data property. Plain assignment of
 * `__proto__` would replace the prototype instead, so that one key goes
 * through defineProperty.
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

/** The own property `key` of `source`, never an inherited one. */
export function getOwn(source: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(source, key) ? source[key] : undefined;
}

/**
 * Deep copy of a document value: plain objects and arrays are copied, byte
 * arrays and dates duplicated, scalars shared. Used before an in-place
 * transform (JSON Patch) so the stored, possibly cached, original is never
 * touched.
 */
export function cloneValue(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = cloneValue(value[i]);
    return out;
  }
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) setOwn(out, key, cloneValue(value[key]));
    return out;
  }
  // Byte arrays and dates (the msgpack codec makes them), tested without instanceof to work across realms.
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) return (value as Uint8Array).slice();
  if (Object.prototype.toString.call(value) === '[object Date]') return new Date((value as Date).getTime());
  return value;
}
