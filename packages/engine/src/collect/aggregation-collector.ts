/**
 * The collector contract of aggregations (STYLE §10: Query → Weight → Scorer
 * → Collector). One collector per aggregation of the request, fed every
 * matching document of every reader, keeping its state in typed arrays
 * indexed by the *owner*: the bucket of the parent aggregation the document
 * fell into (0 at the top level). So a sub-aggregation under 500 buckets is
 * one collector with arrays of 500 entries, not 500 objects (Elasticsearch's
 * "owning bucket ordinal"), and collecting a document allocates nothing.
 *
 * A bucket collector numbers its own buckets (bucket ordinals) and passes
 * each to its sub-collectors as their owner.
 */
import type { SearchReader } from '../search/reader.js';
import { aggregationErrors, type AggregationPartial } from '@tessera/search-model';

export interface Collector {
  /** Bind the columns of the reader whose documents come next. */
  setReader(reader: SearchReader): void;
  /** One matching document, by its ordinal in the current reader, that fell into parent bucket `owner`. */
  collect(ordinal: number, owner: number): void;
  /** The partial result of parent bucket `owner` (an empty one for an owner that received nothing). */
  partial(owner: number): AggregationPartial;
}

/**
 * Buckets and distinct values one shard keeps for one search, all
 * aggregations together: bounds the memory of a request and the size of its
 * partial (a `_values` on a unique field over millions of documents, or
 * buckets nested under buckets).
 */
export const AGGREGATION_PARTIAL_ENTRIES_MAX = 1_000_000;

export class EntryBudget {
  private used = 0;

  constructor(private readonly max = AGGREGATION_PARTIAL_ENTRIES_MAX) {}

  take(n: number): void {
    this.used += n;
    if (this.used > this.max) throw aggregationErrors.tooLarge(this.max);
  }
}

/** `array` grown (doubling) to hold index `index`; new entries `fill`. */
export function grownFloat64(array: Float64Array, index: number, fill = 0): Float64Array {
  if (index < array.length) return array;
  const grown = new Float64Array(Math.max(array.length * 2, index + 1));
  grown.set(array);
  if (fill !== 0) grown.fill(fill, array.length);
  return grown;
}

export function grownUint32(array: Uint32Array, index: number): Uint32Array {
  if (index < array.length) return array;
  const grown = new Uint32Array(Math.max(array.length * 2, index + 1));
  grown.set(array);
  return grown;
}
