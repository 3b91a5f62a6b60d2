/**
 * The common part of `_values`, `_terms` and `_histogram`: buckets found by
 * key as documents arrive. A subclass turns a document's values into key ids
 * (its own numbering of distinct keys, shared by all owners) and calls
 * `hit`; this class maps (owner, key id) to a bucket ordinal, counts the
 * document once per bucket however many of its values share the bucket, and
 * feeds the sub-collectors.
 *
 * At the top level the owner is always 0, so the bucket ordinal is the key
 * id itself (no map lookup per document): the facet path of the benchmark.
 */
import type { SearchReader } from '../search/reader.js';
import { type Collector, type EntryBudget, grownFloat64, grownUint32 } from './aggregation-collector.js';
import type { AggregationPartial, KeyedBucketsPartial } from '@tessera/search-model';

export abstract class KeyedBucketCollector implements Collector {
  /** Bucket ordinal → documents counted. */
  private docCounts: Uint32Array = new Uint32Array(16);
  /** Bucket ordinal → the `stamp` of the last document counted in it. */
  private stamps: Float64Array = new Float64Array(16);
  /** Bumped once per collected document: a document counts once per bucket. */
  protected stamp = 0;
  private ordCount = 0;
  /** Nested collectors: per owner, key id → bucket ordinal. Null at the top level (ordinal = key id). */
  private readonly owners: Array<Map<number, number> | undefined> | null;

  constructor(private readonly subs: readonly Collector[], topLevel: boolean, private readonly budget: EntryBudget) {
    this.owners = topLevel ? null : [];
  }

  abstract collect(ordinal: number, owner: number): void;

  /** Bind this collector's own columns for `reader`. */
  protected abstract bindReader(reader: SearchReader): void;

  /** The bucket key of key id `id`, as the response shows it. */
  protected abstract keyString(id: number): string;

  setReader(reader: SearchReader): void {
    this.bindReader(reader);
    for (let i = 0; i < this.subs.length; i++) this.subs[i]!.setReader(reader);
  }

  /** The current document (at `ordinal`, in parent bucket `owner`) has a value with key id `id`. */
  protected hit(ordinal: number, owner: number, id: number): void {
    let ord: number;
    const owners = this.owners;
    if (owners === null) {
      ord = id;
      if (ord >= this.ordCount) this.newOrdinals(ord + 1);
    } else {
      let map = owners[owner];
      if (map === undefined) owners[owner] = map = new Map();
      const known = map.get(id);
      if (known === undefined) {
        ord = this.ordCount;
        this.newOrdinals(ord + 1);
        map.set(id, ord);
      } else {
        ord = known;
      }
    }
    if (this.stamps[ord] === this.stamp) return;
    this.stamps[ord] = this.stamp;
    this.docCounts[ord]!++;
    const subs = this.subs;
    for (let i = 0; i < subs.length; i++) subs[i]!.collect(ordinal, ord);
  }

  /**
   * Add `count` documents to the bucket of key id `id` at once: for a
   * top-level collector without sub-aggregations, which counts per
   * dictionary ordinal first (string-buckets.ts).
   */
  protected addDocuments(id: number, count: number): void {
    if (id >= this.ordCount) this.newOrdinals(id + 1);
    this.docCounts[id] += count;
  }

  private newOrdinals(count: number): void {
    this.budget.take(count - this.ordCount);
    this.docCounts = grownUint32(this.docCounts, count - 1);
    this.stamps = grownFloat64(this.stamps, count - 1);
    this.ordCount = count;
  }

  partial(owner: number): KeyedBucketsPartial {
    const out: KeyedBucketsPartial = { kind: 'buckets', keys: [], counts: [], subs: [] };
    const add = (id: number, ord: number): void => {
      out.keys.push(this.keyString(id));
      out.counts.push(this.docCounts[ord]!);
      const subs: AggregationPartial[] = [];
      for (const sub of this.subs) subs.push(sub.partial(ord));
      out.subs.push(subs);
    };
    if (this.owners === null) {
      if (owner === 0) for (let ord = 0; ord < this.ordCount; ord++) add(ord, ord);
    } else {
      const map = this.owners[owner];
      if (map !== undefined) for (const [id, ord] of map) add(id, ord);
    }
    return out;
  }
}
