/**
 * Merging per-shard results (Tantivy's `merge_fruits`): each shard returns
 * its best k = offset + limit hits in the final order; the coordinator
 * merges them by the same order — sort values key by key (documents without
 * a value last), then weight descending, then `_id` ascending (API.md §9.5) —
 * and keeps the requested page. Totals add up exactly. A paged search
 * (`_sort` or `_search_after`) makes weight and `_id` sort keys of its own
 * (search-model cursor.ts), so every shard cut its k by the same order.
 */
import type { SearchHitReply } from '@tessera/rpc';
import { compareSortValues } from '@tessera/search-model';

export interface ShardHit extends SearchHitReply {
  index: string;
  shard: number;
}

export function compareHits(orders: ReadonlyArray<'asc' | 'desc'>) {
  return (a: ShardHit, b: ShardHit): number => {
    for (let i = 0; i < orders.length; i++) {
      const c = compareSortValues(a.sortValues?.[i] ?? null, b.sortValues?.[i] ?? null, orders[i] as 'asc' | 'desc');
      if (c !== 0) return c;
    }
    if (a.score !== b.score) return b.score - a.score;
    // IDs in the engine's `_id` order: numbers before strings, strings by code point.
    const byId = compareSortValues(a.id, b.id, 'asc');
    if (byId !== 0) return byId;
    // Equal IDs of several indexes: by index path, as a `_search_after` cursor orders them (search-model searchAfterFor).
    return compareSortValues(a.index, b.index, 'asc');
  };
}

/** The page [offset, offset + limit) of the merged order. */
export function mergePage(perShard: ShardHit[][], orders: ReadonlyArray<'asc' | 'desc'>, offset: number, limit: number): ShardHit[] {
  const all = perShard.flat();
  all.sort(compareHits(orders));
  return all.slice(offset, offset + limit);
}
