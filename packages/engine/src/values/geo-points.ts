/**
 * The points of geo doc values. A geo field's value slot holds each value's
 * canonical EWKT in the string column (so `_values` aggregations key buckets
 * by EWKT, API.md §10); containment, distance sorts and `_in` weights need
 * the value's points instead: each point, circle centre and polygon centroid
 * as a unit vector (@tessera/geo `centroidsOf`). They are parsed once per
 * distinct value of a column's dictionary, on first use, and kept with the
 * dictionary (segments' never change; the write buffer's is rebuilt after
 * writes and parsed again).
 */
import { centroidsOf, parseEwkt, type Vec3 } from '@tessera/geo';
import type { StringColumn } from './string-column.js';
import type { StringDictionary } from './string-dictionary.js';

const NO_POINTS: readonly Vec3[] = [];

/** Points of one canonical EWKT as unit vectors (none when it does not parse: a value of another type in the slot). */
export function ewktPoints(ewkt: string): readonly Vec3[] {
  try {
    return centroidsOf(parseEwkt(ewkt));
  } catch {
    return NO_POINTS;
  }
}

/** Points per dictionary ordinal of one string column, parsed on demand. */
export class GeoColumnPoints {
  private readonly byOrd: Array<readonly Vec3[] | undefined>;

  constructor(private readonly dictionary: StringDictionary) {
    this.byOrd = new Array<readonly Vec3[] | undefined>(dictionary.count);
  }

  /** Points of dictionary ordinal `ord`. */
  pointsOf(ord: number): readonly Vec3[] {
    let points = this.byOrd[ord];
    if (points === undefined) this.byOrd[ord] = points = ewktPoints(this.dictionary.term(ord));
    return points;
  }
}

const BY_DICTIONARY = new WeakMap<StringDictionary, GeoColumnPoints>();

/** The points of a geo column's values, shared by every query over the same dictionary. */
export function geoColumnPoints(column: StringColumn): GeoColumnPoints {
  let points = BY_DICTIONARY.get(column.dictionary);
  if (points === undefined) BY_DICTIONARY.set(column.dictionary, points = new GeoColumnPoints(column.dictionary));
  return points;
}

/** Parsed points of recently indexed values: a document's values are parsed by folding and again here. */
const RECENT_MAX = 1024;
const recent = new Map<string, readonly Vec3[]>();

/** `ewktPoints` through a small bounded cache (indexing sees the same places again and again). */
export function cachedEwktPoints(ewkt: string): readonly Vec3[] {
  let points = recent.get(ewkt);
  if (points === undefined) {
    if (recent.size >= RECENT_MAX) recent.clear();
    recent.set(ewkt, points = ewktPoints(ewkt));
  }
  return points;
}
