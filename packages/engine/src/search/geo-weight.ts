/**
 * Geo leaves of the query DSL (API.md §9.3):
 *
 * - `{"field": {"_in": <shape>}}`: documents with a point inside the shape
 *   (points, circle centres and polygon centroids of their values; see
 *   values/geo-points.ts). Candidates are the union of the postings of the
 *   shape's HTM covering, named as indexing names a point's trixels
 *   (indexing/geo-terms.ts); each candidate's points are then tested
 *   exactly. Weight π − the angle (radians) between the document's point
 *   nearest the shape's centroid and that centroid. Without values the
 *   covering alone decides (bucket-approximate, weight 0, as §8.3 says of
 *   ranges); without accuracy terms every document with a value is tested.
 * - `{"field": <shape>}`: the value equal to the shape (its canonical EWKT's
 *   exact-shape term, or the value itself when the field has no terms),
 *   weight 0.
 * - A shape on a text or keyword field is its EWKT as text (a geo cast,
 *   §9.3 "geo → text only"); on other types a 400.
 */
import {
  ancestorTrixel, angle, centroidOf, coverRegion, formatEwkt, type Geometry, parseGeoShape, type Region, regionOf,
  type Trixel, type Vec3,
} from '@tessera/geo';
import { accuracyPrefix, DEFAULT_GEO_ACCURACY, fieldTerm, type FieldSpec, geoValueToken } from '@tessera/schema';
import { trixelTerm } from '../indexing/geo-terms.js';
import { NO_MORE_DOCS, type Scorer } from '../scorers/doc-iterator.js';
import { type LeafValue, queryErrors } from '@tessera/search-model';
import { Bitset } from '../values/bitset.js';
import { geoColumnPoints } from '../values/geo-points.js';
import { bitsetScorer } from '../scorers/ordinal-scorers.js';
import { ScoredDocsScorer } from '../scorers/scored-docs-scorer.js';
import { ordinalsInDocidOrder, type SearchReader } from './reader.js';
import { NONE_WEIGHT, type Statistics, TermUnionWeight, TermWeight, ValueWeight, type Weight } from './weight.js';

type ShapeLeaf = Extract<LeafValue, { kind: 'shape' }>;

/**
 * Trixels a covering may have: few postings lists per query, each trixel
 * still small against a city-sized circle at the default levels.
 */
export const COVER_TRIXELS_MAX = 64;
/** Candidate terms at most (a covering's coarse trixels expand to a level of the field's accuracy): the whole sphere at level 3. */
export const CANDIDATE_TERMS_MAX = 512;

function shapeGeometry(leaf: ShapeLeaf): Geometry {
  return parseGeoShape(leaf.shape, leaf.value);
}

/** A shape leaf on field `spec` (any type: geo, or a geo cast onto text). */
export function geoShapeWeight(spec: FieldSpec, leaf: ShapeLeaf, stats: Statistics): Weight | { readonly castText: string } {
  if (spec.type !== 'geo') {
    if ((spec.type !== 'text' && spec.type !== 'keyword') || leaf.within) {
      throw queryErrors.invalidQuery(`${leaf.within ? '_in ' : ''}${leaf.shape} does not apply to field '${spec.path}' of type ${spec.type}`);
    }
    return { castText: formatEwkt(shapeGeometry(leaf)) };
  }
  const geometry = shapeGeometry(leaf);
  if (!leaf.within) {
    const ewkt = formatEwkt(geometry);
    if (spec.index.fieldTerms) return new TermWeight(fieldTerm(spec, ewkt), null, '', 0);
    if (spec.index.fieldValues) return new ValueWeight(spec.slot, { kind: 'string', from: ewkt, to: ewkt });
    return NONE_WEIGHT;
  }
  const centroid = centroidOf(geometry);
  if (centroid === null) return NONE_WEIGHT; // an empty shape holds nothing
  const region = regionOf(geometry);
  const levels = [...(spec.accuracy as readonly number[])].sort((a, b) => a - b);
  const terms = spec.index.fieldTerms && levels.length > 0 ? coveringTerms(region, levels, spec.prefix) : null;
  if (!spec.index.fieldValues) {
    if (terms !== null) return new GeoCandidatesWeight(terms);
    // Too large a shape for the field's levels, or no levels: every document with a trixel term.
    return spec.index.fieldTerms && levels.length > 0 ? new TermUnionWeight([`${spec.prefix}${accuracyPrefix(levels[0]!)}G`], null) : NONE_WEIGHT;
  }
  return new GeoWithinWeight(spec.slot, terms, region, centroid, stats.scoring);
}

/** A shape leaf without a field: global exact-shape terms, or (`_in`) the global trixel terms of the default levels, weight 0. */
export function globalGeoShapeWeight(leaf: ShapeLeaf): Weight {
  const geometry = shapeGeometry(leaf);
  if (!leaf.within) return new TermWeight(`G${geoValueToken(formatEwkt(geometry))}`, null, '', 0);
  if (centroidOf(geometry) === null) return NONE_WEIGHT;
  const terms = coveringTerms(regionOf(geometry), DEFAULT_GEO_ACCURACY, '');
  return terms === null ? NONE_WEIGHT : new GeoCandidatesWeight(terms);
}

/**
 * Terms naming the trixels of the shape's covering at the field's levels:
 * a covering trixel at a level the field indexes is its own term; one
 * between two levels is named by its ancestor at the level above it (a
 * superset); one coarser than every level by its descendants at the
 * coarsest. Null when that takes more than CANDIDATE_TERMS_MAX terms.
 */
export function coveringTerms(region: Region, levels: readonly number[], prefix: string): string[] | null {
  const cover: Trixel[] = coverRegion(region, levels[levels.length - 1]!, COVER_TRIXELS_MAX);
  const terms = new Set<string>();
  const coarsest = levels[0]!;
  for (const t of cover) {
    let level = -1;
    for (const l of levels) if (l <= t.level) level = l;
    if (level >= 0) {
      terms.add(prefix + trixelTerm(level, ancestorTrixel(t.id, t.level, level)));
    } else {
      const shift = BigInt(2 * (coarsest - t.level));
      const count = 1n << shift;
      if (terms.size + Number(count) > CANDIDATE_TERMS_MAX) return null;
      const first = t.id << shift;
      for (let k = 0n; k < count; k++) terms.add(prefix + trixelTerm(coarsest, first + k));
    }
    if (terms.size > CANDIDATE_TERMS_MAX) return null;
  }
  return [...terms];
}

/** Ordinals of documents holding any of `terms` (their postings OR-ed into a bitset); null when none. */
function candidates(reader: SearchReader, terms: readonly string[]): { bits: Bitset; count: number } | null {
  let bits: Bitset | null = null;
  let count = 0;
  for (const term of terms) {
    const postings = reader.postingsIterator(term);
    if (postings === null) continue;
    bits ??= new Bitset(reader.docCount);
    const words = bits.words;
    for (let d = postings.next(); d !== NO_MORE_DOCS; d = postings.next()) {
      const o = postings.ordinal;
      words[o >>> 5] = words[o >>> 5]! | (1 << (o & 31));
      count++;
    }
  }
  return bits === null ? null : { bits, count };
}

/** The covering's candidates as the match (fields without values; global leaves): weight 0. */
class GeoCandidatesWeight implements Weight {
  constructor(private readonly terms: readonly string[]) {}

  scorer(reader: SearchReader): Scorer | null {
    const found = candidates(reader, this.terms);
    return found === null ? null : bitsetScorer(reader, found.bits, found.count);
  }
}

/** `_in` on a field with values: candidates (covering terms, or every valued document when `terms` is null) tested exactly. */
export class GeoWithinWeight implements Weight {
  constructor(
    private readonly slot: number,
    private readonly terms: readonly string[] | null,
    private readonly region: Region,
    private readonly centroid: Vec3,
    private readonly scoring: boolean,
  ) {}

  scorer(reader: SearchReader): Scorer | null {
    const column = reader.stringColumn(this.slot);
    if (column === null) return null;
    let bits: Bitset;
    if (this.terms !== null) {
      const found = candidates(reader, this.terms);
      if (found === null) return null;
      bits = found.bits;
    } else {
      bits = new Bitset(reader.docCount);
      if (column.scanRange(null, null, bits) === 0) return null;
    }
    const points = geoColumnPoints(column);
    const docids: number[] = [];
    const scores: number[] = [];
    for (let o = bits.nextSetBit(0); o >= 0; o = bits.nextSetBit(o + 1)) {
      if (o >= column.docCount || !reader.isLiveOrdinal(o)) continue;
      let inside = false;
      let nearest = Infinity;
      for (let k = 0, n = column.valueCount(o); k < n; k++) {
        for (const p of points.pointsOf(column.ordAt(o, k))) {
          if (!inside && this.region.contains(p)) inside = true;
          if (this.scoring) {
            const a = angle(p, this.centroid);
            if (a < nearest) nearest = a;
          } else if (inside) {
            break;
          }
        }
      }
      if (!inside) continue;
      docids.push(reader.docidOf[o]!);
      scores.push(this.scoring ? Math.PI - nearest : 0);
    }
    if (docids.length === 0) return null;
    return ordinalsInDocidOrder(reader) ? new ScoredDocsScorer(Uint32Array.from(docids), Float64Array.from(scores)) : sortedScorer(docids, scores);
  }
}

function sortedScorer(docids: number[], scores: number[]): Scorer {
  const order = docids.map((_, i) => i).sort((a, b) => docids[a]! - docids[b]!);
  return new ScoredDocsScorer(Uint32Array.from(order, (i) => docids[i]!), Float64Array.from(order, (i) => scores[i]!));
}
