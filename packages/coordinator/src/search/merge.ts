/**
 * Merging per-shard results (Tantivy's `merge_fruits`): each shard returns
 * its best k = offset + limit hits in the final order; the coordinator
 * merges them by the same order — sort values key by key (documents without
 * a value last), then weight descending, then `_id` ascending (API.md §9.5) —
 * and keeps the requested page. Totals add up exactly. A paged search
 * (`_sort` or `_search_after`) makes weight and `_id` sort keys of its own
 * (search-model cursor.ts), so every shard cut its k by the same order.
 *
 * A page entry points at the shard's hit rather than copying it with its
 * index and shard added: the hits are the shard's reply (in process, the
 * node's own objects), and a copy per hit was most of the merge's cost.
 */
import type { SearchHitReply } from '@tessera/rpc';
import { compareSortValues } from '@tessera/search-model';

/** One shard's reply to merge: its hits, best first, and where they come from. */
export interface ShardHits {
  hits: readonly SearchHitReply[];
  index: string;
  shard: number;
}

/** A hit of the merged page, with the index and shard it comes from. */
export interface PageHit {
  hit: SearchHitReply;
  index: string;
  shard: number;
}

export function compareHits(orders: ReadonlyArray<'asc' | 'desc'>) {
  return (x: PageHit, y: PageHit): number => {
    const a = x.hit, b = y.hit;
    for (let i = 0; i < orders.length; i++) {
      const c = compareSortValues(a.sortValues?.[i] ?? null, b.sortValues?.[i] ?? null, orders[i] as 'asc' | 'desc');
      if (c !== 0) return c;
    }
    if (a.score !== b.score) return b.score - a.score;
    // IDs in the engine's `_id` order: numbers before strings, strings by code point.
    const byId = compareSortValues(a.id, b.id, 'asc');
    if (byId !== 0) return byId;
    // Equal IDs of several indexes: by index path, as a `_search_after` cursor orders them (search-model searchAfterFor).
    return compareSortValues(x.index, y.index, 'asc');
  };
}

/** The page [offset, offset + limit) of the merged order. */
export function mergePage(perShard: readonly ShardHits[], orders: ReadonlyArray<'asc' | 'desc'>, offset: number, limit: number): PageHit[] {
  // One shard's hits are in the final order already.
  if (perShard.length === 1) return pageOf(perShard[0]!, offset, Math.min(offset + limit, perShard[0]!.hits.length));
  const all: PageHit[] = [];
  for (const { hits, index, shard } of perShard) for (const hit of hits) all.push({ hit, index, shard });
  all.sort(compareHits(orders));
  return all.slice(offset, offset + limit);
}

function pageOf({ hits, index, shard }: ShardHits, from: number, to: number): PageHit[] {
  const page: PageHit[] = [];
  for (let i = from; i < to; i++) page.push({ hit: hits[i]!, index, shard });
  return page;
}
