/**
 * Accuracy terms of geo values (API.md §5.8, §8.1): for each of the value's
 * points (points, circle centres, polygon centroids) and each `_accuracy`
 * HTM level, the trixel holding it: `<prefix><hex level>.G<hex trixel id>`
 * (`<a>.` = level 10), under the field's prefix and/or globally as `_index`
 * says. A query's shape covering names the same terms (search/geo-weight.ts),
 * so the documents whose points may lie inside a shape are a union of a few
 * postings lists. The exact-shape term and the EWKT value are the generic
 * ones (document-terms.ts, schema terms.ts `valueToken`).
 */
import { trixelIds } from '@tessera/geo';
import { accuracyPrefix, type FieldSpec } from '@tessera/schema';
import { NO_POSITION } from '../analysis/analyzer.js';
import { cachedEwktPoints } from '../values/geo-points.js';

/** Where terms go (document-terms.ts's collector). */
export interface TermSink {
  add(term: string, position: number): void;
}

/** The token under an accuracy prefix of a trixel: type char `G` and the id in hex. */
export function trixelTerm(level: number, id: bigint): string {
  return `${accuracyPrefix(level)}G${id.toString(16)}`;
}

/** Add the trixel terms of one geo value (its canonical EWKT). */
export function addGeoAccuracyTerms(sink: TermSink, spec: FieldSpec, ewkt: string): void {
  const levels = spec.accuracy as readonly number[];
  if (levels.length === 0 || (!spec.index.fieldTerms && !spec.index.globalTerms)) return;
  for (const point of cachedEwktPoints(ewkt)) {
    const ids = trixelIds(point, levels);
    for (let k = 0; k < levels.length; k++) {
      const term = trixelTerm(levels[k]!, ids[k]!);
      if (spec.index.fieldTerms) sink.add(spec.prefix + term, NO_POSITION);
      if (spec.index.globalTerms) sink.add(term, NO_POSITION);
    }
  }
}
