/**
 * The search entry of a shard copy (API.md §9): run the request the
 * coordinator parsed over the readers of the index as they are now
 * (search/), and fetch the stored documents of the best hits.
 */
import type { DocumentBody, DocumentId, StoredDocument } from '../documents/types.js';
import {
  type AggregationRequest, type AggregationsPartial, type HighlightRequest, type Query, type SearchAfter, type SortKey, valueOrder,
} from '@tessera/search-model';
import { Highlighter, type HitHighlight } from '../highlight/highlighter.js';
import { planAggregations } from '../collect/index.js';
import { liveDocumentFields, liveDocumentId, search } from '../search/index.js';
import type { ShardState } from './state.js';

export interface ShardSearchRequest {
  /** The parsed query (@tessera/search-model `parseQuery`…: the coordinator parses it once); absent = everything. */
  query?: Query | undefined;
  /** Parsed sort keys (§9.5); absent = by relevance. */
  sort?: readonly SortKey[] | undefined;
  /** Best hits wanted (offset + limit); 0 counts only. */
  k: number;
  countOnly?: boolean | undefined;
  schema?: Record<string, unknown> | undefined;
  /** Parsed `_aggs` (API.md §10, `parseAggregations`): bound to the schema here, aggregated over every match. */
  aggs?: readonly AggregationRequest[] | undefined;
  /** A cursor (`_search_after`): only hits ordered after it, by `sort` (search-model `cursorSortKeys`). */
  after?: SearchAfter | undefined;
  /** Parsed `_highlight`: each hit gets the fragments of these fields, marked where the query matches. */
  highlight?: HighlightRequest | undefined;
  /**
   * False: the hits come without their bodies, their `_id` and `_version` read from the snapshot's value
   * columns, so the page costs no document read (a page that shows only those, `_selector: "_id"`). A hit
   * whose columns lack them is fetched as usual. Ignored with `highlight`, which needs the bodies.
   */
  documents?: boolean | undefined;
}

export interface ShardSearchResult {
  total: number;
  hits: Array<{
    id: DocumentId; docid: number; version: number;
    /**
     * The stored body, or its compact JSON alone when the document has it (StoredDocument.bodyJson): a hit is
     * sent as that text. Neither when the request asked for no `documents`.
     */
    body?: DocumentBody; bodyJson?: string;
    score: number; sortValues?: Array<number | string | null>; highlight?: HitHighlight;
  }>;
  /** The direction of each key's values (`_score` ascending is best first: its values descend). */
  sortOrders: Array<'asc' | 'desc'>;
  /** With a cursor: the matches ordered before it, for the hits' `#rank`. */
  before?: number;
  /** This shard's partial of `aggs`, for the coordinator to merge. */
  aggregations?: AggregationsPartial;
}

/** What a hit shows without its document (ShardSearchRequest.documents false). */
type HitOwnFields = Pick<StoredDocument, 'id' | 'docid' | 'version'>;

/** A search without a query matches every document. */
const ALL_QUERY: Query = { kind: 'all' };

/**
 * SEARCH on this shard (API.md §9): run the parsed query and sort over a
 * snapshot of the index, and fetch the best `k` documents. Totals are
 * exact. Every acknowledged write is visible (no refresh interval).
 */
export async function searchShard(state: ShardState, request: ShardSearchRequest): Promise<ShardSearchResult> {
  state.checkOpen();
  const query: Query = request.query ?? ALL_QUERY;
  const sort: readonly SortKey[] = request.sort ?? [];
  // The coordinator's schema is the newest; the shard's own covers what it has indexed.
  const schema = request.schema ?? state.schema;
  // Bound before the search starts, so a bad `_aggs` is a 400 even on a shard without documents.
  const aggregations = request.aggs === undefined ? undefined : planAggregations(request.aggs, schema);
  const readers = state.index.readers();
  const result = search(readers, {
    query, sort, k: request.k, countOnly: request.countOnly,
    ...(aggregations === undefined ? {} : { aggregations }), ...(request.after === undefined ? {} : { after: request.after }),
  }, schema);
  const highlighter = request.highlight === undefined ? null : new Highlighter(query, request.highlight, schema);
  const bodiless = request.documents === false && highlighter === null;
  const docs: Array<StoredDocument | HitOwnFields | undefined> = await Promise.all(result.hits.map((h) => {
    const own = bodiless ? liveDocumentFields(readers, h.docid) : undefined;
    if (own?.version !== undefined) return { id: own.id, docid: h.docid, version: own.version };
    return state.getByDocid(h.docid, () => liveDocumentId(readers, h.docid));
  }));
  const hits: ShardSearchResult['hits'] = [];
  result.hits.forEach((h, i) => {
    const doc = docs[i];
    // A document deleted since the snapshot is left out of the page (the total was exact at the snapshot).
    if (doc === undefined) return;
    const hit: ShardSearchResult['hits'][number] = { id: doc.id, docid: doc.docid, version: doc.version, score: h.score };
    if (!bodiless) {
      // Not bodiless: every hit was fetched whole.
      const stored = doc as StoredDocument;
      if (stored.bodyJson === undefined) hit.body = stored.body;
      else hit.bodyJson = stored.bodyJson;
      if (highlighter !== null) hit.highlight = highlighter.highlight(stored.body);
    }
    if (h.sortValues !== undefined) hit.sortValues = h.sortValues;
    hits.push(hit);
  });
  const reply: ShardSearchResult = { total: result.total, hits, sortOrders: sort.map(valueOrder) };
  if (result.before !== undefined) reply.before = result.before;
  if (result.aggregations !== undefined) reply.aggregations = result.aggregations;
  return reply;
}
