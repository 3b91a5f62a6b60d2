/**
 * Merging per-shard results (Tantivy's `merge_fruits`): each shard returns
 * its best k = offset + limit hits in the final order; the coordinator
 * merges them by the same order — sort values key by key (documents without
 * a value last), then weight descending, then `_id` ascending (API.md §9.5) —
 * and keeps the requested page. Totals add up exactly.
 */
import { compareCodePoints } from '@tessera/documents';
import type { DocumentId, SearchHitReply } from '@tessera/rpc';

export interface ShardHit extends SearchHitReply {
  index: string;
  shard: number;
}

export function compareHits(orders: ReadonlyArray<'asc' | 'desc'>) {
  return (a: ShardHit, b: ShardHit): number => {
    for (let i = 0; i < orders.length; i++) {
      const c = compareSortValue(a.sortValues?.[i] ?? null, b.sortValues?.[i] ?? null, orders[i] as 'asc' | 'desc');
      if (c !== 0) return c;
    }
    if (a.score !== b.score) return b.score - a.score;
    const byId = compareIds(a.id, b.id);
    if (byId !== 0) return byId;
    return a.index < b.index ? -1 : a.index > b.index ? 1 : 0;
  };
}

/** Missing values come last in both directions. */
function compareSortValue(a: number | string | null, b: number | string | null, order: 'asc' | 'desc'): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  // Strings in code point order, as the shards sorted them (`<` compares UTF-16 units).
  const c = typeof a === 'string' && typeof b === 'string' ? compareCodePoints(a, b) : a < b ? -1 : a > b ? 1 : 0;
  return order === 'asc' ? c : -c;
}

function compareIds(a: DocumentId, b: DocumentId): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return compareCodePoints(String(a), String(b));
}

/** The page [offset, offset + limit) of the merged order. */
export function mergePage(perShard: ShardHit[][], orders: ReadonlyArray<'asc' | 'desc'>, offset: number, limit: number): ShardHit[] {
  const all = perShard.flat();
  all.sort(compareHits(orders));
  return all.slice(offset, offset + limit);
}
