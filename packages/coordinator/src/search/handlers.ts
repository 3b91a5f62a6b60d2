/**
 * SEARCH and COUNT (API.md §9.1, §9.2): the request is read from the body
 * (`_query`, `_offset`, `_limit`, `_sort`, `_selector`…, and Tessera's
 * `_search_after` and `_highlight`: docs/highlights-and-cursors.md) or, without a body,
 * from `q`, `offset`, `limit`, `sort`, `selector`. The query, sort and
 * `_aggs` are parsed once, here (@tessera/search-model); the parsed forms fan
 * out to one copy of every shard of every index named, and the per-shard top
 * hits are merged.
 * That copy is the primary when its node is active, else an in-sync replica
 * (which holds every acknowledged write): a shard whose primary is down or
 * being replaced is still searched, and only a shard with no in-sync copy
 * on an active node answers 503.
 */
import { bodyOf, type SearchCall, type SearchHitReply, type SearchReply } from '@tessera/rpc';
import {
  type AggregationRequest, cursorSortKeys, type HighlightRequest, type Pagination, parseAggregations, parseHighlight, parsePagination, parseQuery,
  parseQueryStrings, parseSearchAfter, parseSort, parseSortStrings, type Query, renderAggregations, searchAfterFor, type SortKey, type SortValue,
} from '@tessera/search-model';
import { apiErrors } from '../errors.js';
import type { IndexRegistry } from '../indexes/registry.js';
import { isCopyGone } from '../replication/connection-loss.js';
import type { Replicator } from '../replication/replicator.js';
import type { IndexMeta } from '../state/cluster-state.js';
import type { RequestContext } from '../request/context.js';
import { duration } from '../response/human.js';
import type { Reply } from '../response/respond.js';
import { isSelectorSet, selectOrNull, selectorTopKeys } from '../response/selector.js';
import { mergePage, type PageHit } from './merge.js';


/** A hit's own fields, shown without its body: a page whose selector reads only these asks the shards for none. */
const BODILESS_FIELDS = new Set(['_id', '_version']);

const BODY_KEYS = new Set(['_query', '_offset', '_limit', '_check_at_least', '_sort', '_search_after', '_highlight', '_selector', '_aggs', '_aggregations']);

/** A request as read from the body or the parameters, before its query, sort and `_aggs` are parsed. */
interface SearchRequest {
  query?: unknown;
  queryStrings?: string[];
  sort?: unknown;
  sortStrings?: string[];
  pagination: Pagination;
  selector?: string;
  aggs?: unknown;
  /** `_search_after`: the `_sort` of the previous page's last hit. */
  searchAfter?: unknown;
  highlight?: unknown;
}

/** What every shard is sent: parsed and validated once, here, not once per shard. */
interface ParsedSearch {
  query?: Query;
  /** A paged search (`_sort` or `_search_after`): the keys with their tiebreaks (`cursorSortKeys`), whose values each hit shows as `_sort`. */
  sort?: SortKey[];
  aggs?: AggregationRequest[];
  highlight?: HighlightRequest;
}

/** A `_search_after` cursor as parsed: the sort values, and with several indexes the hit's index. */
interface Cursor {
  values: SortValue[];
  index?: string;
}

export class SearchHandlers {
  /** Shard searches in flight from this coordinator, by node. */
  private readonly searching = new Map<string, number>();

  constructor(private readonly registry: IndexRegistry, private readonly replication: Replicator) {}

  async search(ctx: RequestContext, count: boolean): Promise<Reply> {
    const started = process.hrtime.bigint();
    const request = this.request(ctx);
    const { offset, limit } = request.pagination;
    const metas = this.indexes(ctx);
    const multiIndex = metas.length > 1;
    const k = count ? 0 : offset + limit;
    const calls: Array<Promise<SearchReply>> = [];
    // Where each call went, by the calls' order (no promise of its own per shard to carry it).
    const asked: Array<{ meta: IndexMeta; shard: number }> = [];
    // Parsed when the first shard is asked: a search of no shard answers nothing, whatever its query.
    let parsed: ParsedSearch | undefined;
    let cursor: Cursor | undefined;
    const selector = request.selector;
    const bodiless = selector !== undefined && request.highlight === undefined && selectorTopKeys(selector).every((key) => BODILESS_FIELDS.has(key));
    for (const meta of metas) {
      for (let shard = 1; shard <= meta.allocation.length; shard++) {
        if (parsed === undefined) {
          parsed = parse(request, count);
          cursor = request.searchAfter === undefined ? undefined : parseSearchAfter(request.searchAfter, parsed.sort!.length, multiIndex);
        }
        const call: SearchCall = Object.assign({ index: meta.path, shard, k, countOnly: count, schema: meta.schema }, parsed);
        if (cursor !== undefined && !count) call.after = searchAfterFor(cursor.values, cursor.index, meta.path);
        if (bodiless) call.documents = false;
        calls.push(this.searchShard(meta, shard, call));
        asked.push({ meta, shard });
      }
    }
    const replies = calls.length === 1 ? [await calls[0]!] : await Promise.all(calls);
    let total = 0;
    for (const reply of replies) total += reply.total;
    if (count) return { status: 200, value: { total } };
    const orders = replies[0]?.sortOrders ?? [];
    const page = mergePage(replies.map((reply, i) => ({ hits: reply.hits, index: asked[i]!.meta.path, shard: asked[i]!.shard })), orders, offset, limit);
    let aggregations: unknown;
    if (request.aggs !== undefined) {
      const partials = replies.flatMap((r) => (r.aggregations === undefined ? [] : [r.aggregations]));
      aggregations = renderAggregations(partials, total);
    }
    const took = duration(Number(process.hrtime.bigint() - started) / 1e9, ctx.options.human);
    // With a cursor, a page starts after every match ordered before it: what `#rank` counts from.
    const rankFrom = cursor === undefined ? offset : replies.reduce((sum, r) => sum + (r.before ?? 0), 0);
    return new SearchPage(page, {
      rankFrom, comments: ctx.options.comments, multiIndex, selector: request.selector, sortValues: parsed?.sort !== undefined,
      highlight: parsed?.highlight !== undefined,
    }, total, aggregations, took);
  }

  /**
   * One shard's search on the in-sync copy (on an active node) with the
   * fewest searches from this coordinator in flight, the primary first among
   * equals: idle, it is the primary; under load, replicas take their share,
   * and a slow or stalled copy is passed over once its calls pile up. Every
   * in-sync copy sees every acknowledged write (a write is answered only
   * once each of them applied it); a copy out of sync (recovering) is never
   * asked. When a call is cut off by the loss of its node, the next copy is
   * asked; 503 when none is left.
   */
  private async searchShard(meta: IndexMeta, shard: number, call: SearchCall): Promise<SearchReply> {
    const placement = this.registry.placement(meta, shard);
    const candidates = [placement.primary, ...placement.inSync.filter((node) => node !== placement.primary)]
      .filter((node): node is string => node !== undefined && this.replication.isActive(node));
    if (candidates.length === 0) {
      throw placement.primary === undefined ? apiErrors.noShardNode(meta.path, shard) : apiErrors.nodeUnavailable(meta.path, shard, placement.primary);
    }
    // Stable sort: equal loads keep the primary-first order.
    candidates.sort((a, b) => (this.searching.get(a) ?? 0) - (this.searching.get(b) ?? 0));
    let lastError: unknown;
    for (const node of candidates) {
      this.searching.set(node, (this.searching.get(node) ?? 0) + 1);
      try {
        const client = this.registry.client(meta.path, node, shard);
        // Across a wire, bodies come as their JSON alone: the page splices it, and parses only what another form needs.
        call.bodiesAsJson = client.passesByReference !== true;
        return await client.call('shard.search', call);
      } catch (err) {
        if (!isCopyGone(err)) throw err;
        lastError = err;
      } finally {
        const left = (this.searching.get(node) ?? 1) - 1;
        if (left === 0) this.searching.delete(node);
        else this.searching.set(node, left);
      }
    }
    throw lastError;
  }

  /** The indexes searched: missing ones give nothing (200), `name*` expands to existing indexes. */
  private indexes(ctx: RequestContext): IndexMeta[] {
    const out: IndexMeta[] = [];
    const seen = new Set<string>();
    for (const path of ctx.path.indexes) {
      const matches = path.endsWith('*/')
        ? this.registry.list().filter((m) => m.path.startsWith(path.slice(0, -2)))
        : [this.registry.get(path)].filter((m): m is IndexMeta => m !== undefined);
      for (const m of matches) if (!seen.has(m.path)) { seen.add(m.path); out.push(m); }
    }
    return out;
  }

  private request(ctx: RequestContext): SearchRequest {
    const params = ctx.params;
    const hasBody = ctx.req.body.length > 0;
    const body = hasBody ? ctx.object('A search body') : {};
    for (const key of Object.keys(body)) {
      if (key.startsWith('_') && !BODY_KEYS.has(key)) throw apiErrors.badBody(`Unknown search key '${key}'`);
    }
    // Each value typed by its source (a body number, a parameter's digits); defaults and the result window are the model's rule.
    const pagination = parsePagination({
      cursor: body._search_after !== undefined,
      _offset: unsignedFrom(body._offset, '_offset') ?? params.unsigned('offset'),
      _limit: unsignedFrom(body._limit, '_limit') ?? params.unsigned('limit'),
      // Totals are always exact (API.md §9.2): the value is only validated.
      _check_at_least: unsignedFrom(body._check_at_least, '_check_at_least') ?? params.unsigned('check_at_least'),
    });
    const request: SearchRequest = { pagination };
    if (body._query !== undefined) request.query = body._query;
    else {
      const qs = [...params.all('q'), ...params.all('query')];
      if (qs.length > 0) request.queryStrings = qs;
    }
    if (body._sort !== undefined) request.sort = body._sort;
    else if (params.all('sort').length > 0) {
      const metric = params.string('metric');
      if (metric === undefined) request.sortStrings = params.all('sort');
      else request.sort = sortWithMetric(params.all('sort'), metric);
    }
    const selector = typeof body._selector === 'string' ? body._selector : ctx.options.selector;
    if (selector !== undefined) request.selector = selector;
    if (body._aggs !== undefined && body._aggregations !== undefined) throw apiErrors.badBody("Use either '_aggs' or '_aggregations', not both");
    const aggs = body._aggs ?? body._aggregations;
    if (aggs !== undefined) request.aggs = aggs;
    if (body._search_after !== undefined) request.searchAfter = body._search_after;
    if (body._highlight !== undefined) request.highlight = body._highlight;
    return request;
  }
}

/**
 * The query, sort and (unless counting: COUNT answers only the total)
 * `_aggs` of `request`, parsed and validated (400 on any mistake) in the
 * order the shards used to parse them; bound to each shard's schema there.
 */
function parse(request: SearchRequest, count: boolean): ParsedSearch {
  const parsed: ParsedSearch = {};
  if (request.query !== undefined) parsed.query = parseQuery(request.query);
  else if (request.queryStrings !== undefined) parsed.query = parseQueryStrings(request.queryStrings);
  let sort: SortKey[] | undefined;
  if (request.sort !== undefined) sort = parseSort(request.sort);
  else if (request.sortStrings !== undefined) sort = parseSortStrings(request.sortStrings);
  // A sorted or paged search orders by its keys, then weight, then `_id`, all explicit: hits can then say where they stand.
  if (sort !== undefined || request.searchAfter !== undefined) parsed.sort = cursorSortKeys(sort ?? []);
  if (request.aggs !== undefined && !count) parsed.aggs = parseAggregations(request.aggs);
  if (request.highlight !== undefined && !count) parsed.highlight = parseHighlight(request.highlight);
  return parsed;
}

/**
 * `sort=field:ref` with `metric=m` (API.md §9.1) as the `_sort` value it
 * means: each key with a reference becomes `{"field": {"_value": ref,
 * "_metric": m}}` (a leading `-` is `_order: desc`), the others stay
 * strings. Both are validated by `parseSort`, as a body's `_sort` is.
 */
function sortWithMetric(sorts: string[], metric: string): unknown[] {
  return sorts.map((s) => {
    const colon = s.indexOf(':');
    if (colon < 0) return s;
    const name = s.slice(0, colon);
    const descending = name.startsWith('-');
    const field = descending || name.startsWith('+') ? name.slice(1) : name;
    return { [field]: { _order: descending ? 'desc' : 'asc', _value: s.slice(colon + 1), _metric: metric } };
  });
}

function unsignedFrom(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw apiErrors.badBody(`'${name}' must be an unsigned integer`);
  return value;
}

interface PageOptions {
  /** `#rank` of the page's first hit. */
  readonly rankFrom: number;
  /** Each hit shows its values of the sort keys as `_sort` (a paged search). */
  readonly sortValues: boolean;
  /** Each hit shows its `_highlight` fragments (`{}` when no field matched). */
  readonly highlight: boolean;
  readonly comments: boolean;
  readonly multiIndex: boolean;
  readonly selector: string | undefined;
}

/**
 * A SEARCH answer (API.md §9.1): `aggregations` when asked, `hits`, `count`,
 * `total`, `took`. Its compact JSON is spliced from each hit's stored source
 * text (SearchHitReply.bodyJson, encoded once per cached document), as GET
 * does, instead of copying every body into a new object and serialising it
 * all again (the copy and the JSON were ~100 µs of a 10-hit page, profiled);
 * the object form is built only when another format, an indent or a
 * `_selector` needs it.
 */
class SearchPage implements Reply {
  readonly status = 200;
  readonly json: string | undefined;
  private built: Record<string, unknown> | undefined;
  private readonly best: number;

  constructor(private readonly page: readonly PageHit[], private readonly options: PageOptions,
    private readonly total: number, private readonly aggregations: unknown, private readonly took: unknown) {
    let best = 0;
    let spliceable = options.selector === undefined;
    for (const { hit } of page) {
      if (hit.score > best) best = hit.score;
      if (hit.bodyJson === undefined) spliceable = false;
    }
    this.best = best;
    this.json = spliceable ? this.spliced() : undefined;
  }

  get value(): Record<string, unknown> {
    if (this.built !== undefined) return this.built;
    const value: Record<string, unknown> = {};
    if (this.aggregations !== undefined) value.aggregations = this.aggregations;
    const selector = this.options.selector;
    // A drill selector (`_id`, `a.b`) reads one top-level field: a hit's own field (`_id`…) needs no body, any other
    // needs the body alone; only a `{…}` selector, or none, picks from the whole hit with its fields in order.
    const top = selector === undefined || isSelectorSet(selector) ? undefined : selectorTopKeys(selector)[0]!;
    // Hits without a body: the shards were asked for none (a selector of their own fields alone).
    const hits = this.page.map((h, i) => selectOrNull(top === undefined ? this.hit(h, i, hasBody(h.hit)) : this.drillable(h, i, top), selector));
    return this.built = Object.assign(value, { hits, count: hits.length, total: this.total, took: this.took });
  }

  /** The `#` fields of a hit (`comments`), in the order both forms write them. */
  private comments({ hit, shard, index }: PageHit, i: number): Array<[string, unknown]> {
    const fields: Array<[string, unknown]> = [
      ['#docid', hit.docid], ['#shard', shard], ['#rank', this.options.rankFrom + i], ['#weight', hit.score],
      ['#percent', this.best > 0 ? Math.round((100 * hit.score) / this.best) : 100],
    ];
    if (this.options.multiIndex) fields.push(['#index', index]);
    return fields;
  }

  /** A hit as an object: its body's fields (with `withBody`), then its own (`_id`, `_version`…). */
  private hit(page: PageHit, i: number, withBody: boolean): Record<string, unknown> {
    const { hit } = page;
    const value: Record<string, unknown> = withBody ? Object.assign({}, bodyOf(hit)) : {};
    value._id = hit.id;
    value._version = hit.version;
    if (this.options.sortValues) value._sort = this.sortOf(page);
    if (this.options.highlight) value._highlight = hit.highlight ?? {};
    if (this.options.comments) for (const [key, v] of this.comments(page, i)) value[key] = v;
    return value;
  }

  /** What a drill selector starting at `top` reads the same from as from the whole hit: its own fields, or its body. */
  private drillable(page: PageHit, i: number, top: string): unknown {
    const own = this.hit(page, i, false);
    return Object.hasOwn(own, top) || !hasBody(page.hit) ? own : bodyOf(page.hit);
  }

  /** Where the hit stands: its sort values (with the index path when several are searched), the `_search_after` of the next page. */
  private sortOf({ hit, index }: PageHit): unknown[] {
    const values: unknown[] = hit.sortValues ?? [];
    return this.options.multiIndex ? [...values, index] : values;
  }

  private spliced(): string {
    const { sortValues, highlight, comments } = this.options;
    // Pieces joined once: one flat string of the page's size (appending them one by one allocated the page's size
    // again in short-lived strings, and left a rope that encoding had to flatten: sampled, 14 KB for a 9 KB page).
    const parts: string[] = [this.aggregations === undefined ? '{"hits":[' : `{"aggregations":${JSON.stringify(this.aggregations)},"hits":[`];
    for (let i = 0; i < this.page.length; i++) {
      const page = this.page[i]!;
      const hit = page.hit;
      const source = hit.bodyJson!;
      // The source's fields, then the hit's own: `{` alone for an empty body.
      parts.push(i === 0 ? '' : ',', source.length === 2 ? '{' : source.slice(0, -1), source.length === 2 ? '' : ',');
      parts.push('"_id":', typeof hit.id === 'number' ? String(hit.id) : JSON.stringify(hit.id), ',"_version":', String(hit.version));
      if (sortValues) parts.push(',"_sort":', JSON.stringify(this.sortOf(page)));
      if (highlight) parts.push(',"_highlight":', JSON.stringify(hit.highlight ?? {}));
      if (comments) for (const [key, v] of this.comments(page, i)) parts.push(`,"${key}":`, JSON.stringify(v) ?? 'null');
      parts.push('}');
    }
    parts.push(`],"count":${this.page.length},"total":${this.total},"took":${JSON.stringify(this.took)}}`);
    return parts.join('');
  }
}

function hasBody(hit: SearchHitReply): boolean {
  return hit.body !== undefined || hit.bodyJson !== undefined;
}
