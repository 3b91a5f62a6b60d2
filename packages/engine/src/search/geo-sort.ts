/**
 * Sorting by great-circle distance (API.md §9.5): `{"checkin": {"_value":
 * <shape or point>}}` or `sort=checkin:POINT(…)` ranks documents by the
 * distance in metres from their points (values/geo-points.ts: points, circle
 * centres, polygon centroids) to the reference shape's centroid — the
 * nearest point ascending, the farthest descending. A geo sort without a
 * reference is a 400: geo values have no order of their own.
 */
import { angle, centroidOf, EARTH_RADIUS_M, parseGeoValue, type Vec3 } from '@tessera/geo';
import type { FieldSpec } from '@tessera/schema';
import { queryErrors, type SortKey } from '@tessera/search-model';
import { geoColumnPoints } from '../values/geo-points.js';
import type { SearchReader } from './reader.js';
import type { ReaderDistance, SortPlan, ValueDistance } from '../collect/sort-collector.js';

/** The plan of a sort key on the geo field `spec`. */
export function geoSortPlan(key: SortKey, spec: FieldSpec): SortPlan {
  if (key.value === undefined) throw queryErrors.invalidSort(`Sorting by geo field '${key.path}' needs a _value (a point or a shape)`);
  let centroid: Vec3 | null;
  try {
    centroid = centroidOf(parseGeoValue(key.value));
  } catch (err) {
    throw queryErrors.invalidSort(`Invalid _value for sorting by '${key.path}': ${err instanceof Error ? err.message : String(err)}`);
  }
  if (centroid === null) throw queryErrors.invalidSort(`Invalid _value for sorting by '${key.path}': an empty shape has no centre`);
  return { kind: 'distance', slot: spec.slot, order: key.order, distance: new GeoValueDistance(spec.slot, centroid) };
}

/** Distances in metres of a geo slot's values to a reference point, measured once per distinct value and reader. */
export class GeoValueDistance implements ValueDistance {
  constructor(private readonly slot: number, readonly reference: Vec3) {}

  bind(reader: SearchReader): ReaderDistance | null {
    const column = reader.stringColumn(this.slot);
    if (column === null) return null;
    const points = geoColumnPoints(column);
    // Per dictionary ordinal: the nearest and the farthest of the value's points (NaN: not measured yet).
    const nearest = new Float64Array(column.dictionary.count).fill(NaN);
    const farthest = new Float64Array(column.dictionary.count).fill(NaN);
    const reference = this.reference;
    const measure = (ord: number): void => {
      let lo = NaN;
      let hi = NaN;
      for (const p of points.pointsOf(ord)) {
        const d = angle(p, reference) * EARTH_RADIUS_M;
        if (lo !== lo || d < lo) lo = d;
        if (hi !== hi || d > hi) hi = d;
      }
      nearest[ord] = lo;
      farthest[ord] = hi;
    };
    return {
      distance(ordinal: number, largest: boolean): number {
        if (ordinal >= column.docCount) return NaN;
        let best = NaN;
        for (let k = 0, n = column.valueCount(ordinal); k < n; k++) {
          const ord = column.ordAt(ordinal, k);
          if (nearest[ord] !== nearest[ord] && farthest[ord] !== farthest[ord]) measure(ord);
          const d = largest ? farthest[ord]! : nearest[ord]!;
          if (d === d && (best !== best || (largest ? d > best : d < best))) best = d;
        }
        return best;
      },
    };
  }
}
