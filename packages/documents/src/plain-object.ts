/**
 * What a document body is made of: plain objects, arrays and scalars (and
 * Uint8Array and Date, which the MessagePack codec round-trips). One test of
 * "a plain object" for every package: decoders, the schema fold, geo shapes,
 * the query DSL and the document transforms.
 */

/**
 * An object made by `{}`/a decoder or with a null prototype — not an array,
 * Date, Uint8Array, Map, class instance… Its prototype is null or a root
 * prototype (whose own prototype is null), which holds for `Object.prototype`
 * of any realm: objects made by `structuredClone` or in a `vm` context (jest)
 * count too.
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === null || Object.getPrototypeOf(proto) === null;
}
