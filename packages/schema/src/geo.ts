/**
 * Geo values in the schema (API.md §8.1, §8.2, §8.6), on top of
 * @tessera/geo: what detection recognises (EWKT strings, objects keyed by a
 * geometry, `[lon, lat]` arrays), the value a geo field indexes (the
 * canonical EWKT of the shape: one string per shape however it was spelt;
 * the stored form keeps what was sent), the token of exact-shape terms, and
 * the geo options' defaults and limits.
 */
import { TesseraError } from '@tessera/errors';
import { formatEwkt, GEO_SHAPE_KEYS, HTM_LEVEL_MAX, isCoordinateArray, looksLikeEwkt, parseEwkt, parseGeoValue } from '@tessera/geo';
import { schemaErrors } from './errors.js';
import { isPlainObject } from './keys.js';
import { xxh32 } from './xxh32.js';

/** Keys that make an object a geo value (`_point`, `_circle`, …, `_ewkt`). */
export const GEO_VALUE_KEYS: ReadonlySet<string> = GEO_SHAPE_KEYS;

/** API.md §8.1: HTM levels of a geo field's accuracy terms. */
export const DEFAULT_GEO_ACCURACY: readonly number[] = [3, 5, 8, 10, 12, 15];
/** API.md §8.2: `_accuracy` of a geo field names HTM levels 0–25. */
export const GEO_ACCURACY_LEVEL_MAX = HTM_LEVEL_MAX;
/** API.md §8.2 defaults of `_partials` and `_error`: stored and reported, not used to index. */
export const DEFAULT_GEO_PARTIALS = true;
export const DEFAULT_GEO_ERROR = 0.3;

export { isCoordinateArray };

/** A string detected as geo: EWKT that parses (API.md §8.1 order: after timedelta). */
export function isEwktString(s: string): boolean {
  if (!looksLikeEwkt(s)) return false;
  try {
    parseEwkt(s);
    return true;
  } catch {
    return false;
  }
}

/** An object keyed by a geometry. */
export function isGeoObject(value: Record<string, unknown>): boolean {
  for (const key of Object.keys(value)) if (GEO_VALUE_KEYS.has(key)) return true;
  return false;
}

/**
 * A value for a geo field: its canonical EWKT to index, and as sent to
 * store. A value of another kind is a type mismatch; a malformed shape the
 * geo package's 400, naming the field.
 */
export function convertGeo(value: unknown, path: string, mismatch: () => Error): { index: string; stored: unknown } {
  if (typeof value !== 'string' && !Array.isArray(value) && !isPlainObject(value)) throw mismatch();
  try {
    return { index: formatEwkt(parseGeoValue(value)), stored: value };
  } catch (err) {
    if (err instanceof TesseraError && err.status === 400) throw schemaErrors.invalidValue(path, 'geo', err.message);
    throw err;
  }
}

/**
 * Token of the exact-shape term of a canonical EWKT (`<prefix>G<token>`): 64
 * bits of two xxh32 seeds, as hex. A hash keeps long polygons within the term
 * length limit and `.`-free (INFO splits term names on dots); 64 bits make a
 * collision between two shapes of one field negligible.
 */
export function geoValueToken(ewkt: string): string {
  return xxh32(ewkt, 0).toString(16).padStart(8, '0') + xxh32(ewkt, 0x9e3779b1).toString(16).padStart(8, '0');
}
