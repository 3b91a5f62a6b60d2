/**
 * Namespaces (API.md §8.7): the paths a namespace's leaf is indexed under
 * (the full one and, with `_partial_paths`, the shortened ones) and which
 * values a namespace of a known type takes.
 */
import type { detectType } from './detect.js';
import type { Inherited } from './spec.js';
import type { FieldType } from './types.js';

/** A namespace being folded: its type once known. */
export interface Namespace {
  readonly segs: readonly string[];
  readonly path: string;
  readonly inh: Inherited;
  type: FieldType | undefined;
  readonly partialPaths: boolean;
}

/**
 * Middle segments whose subsets make partial paths: past this many, only the
 * full path and the namespace + leaf are indexed (2^6 = 64 paths per value
 * at most, whatever the nesting).
 */
export const PARTIAL_PATH_MIDDLES_MAX = 6;

/** The paths below a namespace a leaf at `rest` is indexed under: the full one, then the partial ones (§8.7). */
export function namespacePaths(rest: readonly string[], partial: boolean): Array<readonly string[]> {
  const out: Array<readonly string[]> = [rest];
  if (!partial || rest.length < 2) return out;
  const leaf = rest[rest.length - 1]!;
  const middles = rest.slice(0, -1);
  if (middles.length > PARTIAL_PATH_MIDDLES_MAX) {
    out.push([leaf]);
    return out;
  }
  const full = (1 << middles.length) - 1;
  for (let mask = 0; mask < full; mask++) {
    const path: string[] = [];
    for (let i = 0; i < middles.length; i++) if ((mask & (1 << i)) !== 0) path.push(middles[i]!);
    path.push(leaf);
    out.push(path);
  }
  return out;
}

/**
 * Whether a namespace of type `type` takes a value without conversion
 * (§8.7: another detected type is a 400): the detected type itself, or one it
 * widens (any string into text or keyword, integers into floats, dates into
 * datetimes and back).
 */
export function fitsNamespace(type: FieldType['base'], value: unknown, detected: ReturnType<typeof detectType>): boolean {
  if (typeof detected !== 'string') return detected === null;
  if (detected === type) return true;
  if (type === 'text' || type === 'keyword') return typeof value === 'string';
  if (type === 'floating' || type === 'positive') return detected === 'integer';
  if (type === 'date' || type === 'datetime') return detected === 'date' || detected === 'datetime';
  return false;
}
