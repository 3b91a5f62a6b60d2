/**
 * UUID values (API.md §1.2, §5.7, §8.1): the canonical text form, any case in,
 * lower case out, and Xapiand's condensed form (`~` + URL-safe characters),
 * which is kept verbatim and never decoded. Pure parsing, shared by the
 * schema (uuid fields, UUID-named children) and anything else that names
 * UUIDs.
 */

/** Canonical 8-4-4-4-12 hex form of versions 1–5 (RFC 4122 variant). */
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
/** Xapiand's condensed form. */
export const CONDENSED_UUID_RE = /^~[0-9A-Za-z_-]+$/;

/** A canonical UUID string (any case): what detection types as `uuid`. */
export function isUuidString(s: string): boolean {
  return s.length === 36 && UUID_RE.test(s);
}

export function isCondensedUuid(s: string): boolean {
  return s.length > 1 && s.charCodeAt(0) === 0x7e && CONDENSED_UUID_RE.test(s);
}

/** The stored and indexed form: canonical lower case, condensed verbatim; undefined when not a UUID. */
export function canonicalUuid(s: string): string | undefined {
  if (isUuidString(s)) return s.toLowerCase();
  if (isCondensedUuid(s)) return s;
  return undefined;
}
