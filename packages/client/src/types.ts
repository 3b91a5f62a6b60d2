/**
 * The shapes of the API (API.md, docs/openapi.json) as TypeScript types.
 * Documents are the caller's type `T`: the server keeps any object, so the
 * client cannot know more than the caller tells it; everything the server
 * adds (`_id`, `_version`, the `#` comment fields) is typed here.
 */

/** A document ID, in the index's `_id` type (API.md §1.2): integers come back as numbers. */
export type DocumentId = string | number;

/** An index path (`bank`, `/logs/2026/`), or several for the APIs that span indexes (`['a', 'b']` = `/a,b/`). */
export type IndexName = string;
export type Indexes = IndexName | readonly IndexName[];

/** Any JSON object: the default document type. */
export type JsonObject = Record<string, unknown>;

/** What the server adds to a stored document (API.md §5.1, §5.7); `#` fields unless `comments=false`. */
export interface DocumentMeta {
  _id: DocumentId;
  _version: number;
  /** The shard-local document number. */
  '#docid'?: number;
  /** The shard, 1-based. */
  '#shard'?: number;
}

/** A document as stored, with its ID and version. */
export type StoredDocument<T = JsonObject> = T & DocumentMeta;

/** A write body: the document, optionally with its `_id` (POST, import). */
export type DocumentBody<T = JsonObject> = T & { _id?: DocumentId };

/** A JSON Patch operation (RFC 6902) or Tessera's `incr`/`decr` (API.md §5.4). */
export type PatchOperation =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string }
  | { op: 'incr' | 'decr'; path: string; value?: number; limit?: number };

// ---- search ----------------------------------------------------------------

/**
 * The query DSL (API.md §9.3): field → value or leaf object, `_id`, and the
 * compound operators (`_and`, `_or`, `_not`, … of arrays of queries). Leaf
 * values vary by field type, so they stay `unknown`.
 */
export type Query = { [fieldOrOperator: string]: unknown };

export interface SortOptions {
  _order?: 'asc' | 'desc';
  /** Sort by distance to this value (numbers, dates, geo, strings with `_metric`). */
  _value?: unknown;
  _metric?: string;
}
/** `"f"`, `"-f"`, `"+f"`, `"_score"`, `{f: {...}}`, or an array of these, first most significant (API.md §9.5). */
export type SortKey = string | Record<string, SortOptions | 'asc' | 'desc'>;
export type Sort = SortKey | readonly SortKey[];

export interface HighlightFieldOptions {
  _pre_tag?: string;
  _post_tag?: string;
  _fragment_size?: number;
  _number_of_fragments?: number;
}
/** `_highlight` (docs/highlights-and-cursors.md). */
export interface Highlight extends HighlightFieldOptions {
  _fields: readonly string[] | Record<string, HighlightFieldOptions>;
  _encoder?: 'default' | 'html';
}

/** One value of a hit's `_sort`: what `_search_after` sends back. */
export type SortValue = string | number | null;

export interface SearchRequest<A extends Aggregations = Aggregations> {
  /** The query DSL, or a query string (API.md §9.4); default `"*"`. */
  _query?: Query | string;
  _offset?: number;
  _limit?: number;
  _sort?: Sort;
  _check_at_least?: number;
  _aggs?: A;
  _highlight?: Highlight;
  /** The `_sort` of the previous page's last hit (docs/highlights-and-cursors.md); `_offset` must then be 0 or absent. */
  _search_after?: readonly SortValue[];
}

/** What the server adds to each hit (API.md §9.2). */
export interface HitMeta extends DocumentMeta {
  /** 0-based position in the whole ordering. */
  '#rank'?: number;
  '#weight'?: number;
  /** round(100 × weight / best weight). */
  '#percent'?: number;
  /** The index of the hit, in searches of several indexes. */
  '#index'?: string;
  /** The hit's place in the order, with `_sort` or `_search_after`: send it back as `_search_after`. */
  _sort?: SortValue[];
  /** Field path → highlighted fragments, with `_highlight`. */
  _highlight?: Record<string, string[]>;
}

export type Hit<T = JsonObject> = T & HitMeta;

export interface SearchResult<T = JsonObject, A extends Aggregations = Aggregations> {
  hits: Hit<T>[];
  /** Hits answered. */
  count: number;
  /** Matching documents, exact. */
  total: number;
  /** `"39.889ms"`, or seconds with `human: false`. */
  took?: string | number;
  /** Present when the request asked `_aggs`. */
  aggregations?: AggregationsResult<A>;
}

// ---- aggregations (API.md §10) ---------------------------------------------

type NumericMetric = '_sum' | '_avg' | '_min' | '_max' | '_median' | '_mode' | '_variance';
type BucketType = '_values' | '_value' | '_terms' | '_term' | '_histogram' | '_range';
type Order = 'asc' | 'desc' | { _order: 'asc' | 'desc' };

export interface FieldOption { _field: string }
export interface BucketOptions extends FieldOption {
  _min_doc_count?: number;
  _limit?: number;
  _keyed?: boolean;
  _sort?: Record<string, Order>;
  _interval?: number;
  _shift?: number;
  _ranges?: ReadonlyArray<{ _key?: string; _from?: number | string; _to?: number | string }>;
}

/** One aggregation: a single type key (`_avg`, `_terms`…) with its options, and sub-aggregations for bucket types. */
export type Aggregation =
  | { _count: FieldOption }
  | { [K in NumericMetric]: { [P in K]: FieldOption } }[NumericMetric]
  | { _std_deviation: FieldOption & { _sigma?: number } }
  | { _std: FieldOption & { _sigma?: number } }
  | { _stats: FieldOption }
  | { _extended_stats: FieldOption & { _sigma?: number } }
  | ({ [K in BucketType]: { [P in K]: BucketOptions } }[BucketType] & { _aggs?: Aggregations })
  | { _filter: { _term: Record<string, unknown> }; _aggs?: Aggregations };

export type Aggregations = { [name: string]: Aggregation };

export interface StdDeviationBounds { _upper: number | null; _lower: number | null }
export interface Stats { _count: number; _min: number | null; _max: number | null; _avg: number | null; _sum: number }
export interface ExtendedStats extends Stats {
  _sum_of_squares: number | null;
  _variance: number | null;
  _std_deviation: number | null;
  _std_deviation_bounds: StdDeviationBounds;
}

type SubResults<R> = R extends { _aggs: infer S extends Aggregations } ? AggregationsResult<S> : unknown;
/** A bucket: its count and the results of its sub-aggregations. */
export type Bucket<R = unknown> = { _doc_count: number } & SubResults<R>;
type Keyed<O> = O extends { _keyed: true } ? true : false;

/** The result of one aggregation, from its request: a metric's value, or buckets (an array, or an object with `_keyed: true`). */
export type AggregationResult<R> =
  R extends { _count: unknown } ? { _count: number }
  : R extends { _stats: unknown } ? Stats
  : R extends { _extended_stats: unknown } ? ExtendedStats
  : R extends { _std_deviation: unknown } | { _std: unknown } ? { _std_deviation: number | null; _std_deviation_bounds: StdDeviationBounds }
  : R extends { _filter: unknown } ? Bucket<R>
  : R extends { [K in BucketType]: { [P in K]: infer O } }[BucketType]
    ? (Keyed<O> extends true ? Record<string, Bucket<R>> : Array<Bucket<R> & { _key: string }>)
  : R extends { [K in NumericMetric]: { [P in K]: unknown } }[NumericMetric]
    ? { [K in NumericMetric as R extends { [P in K]: unknown } ? K : never]: number | null }
  : unknown;

/** `aggregations` of a search: the count of matches and one result per requested name. */
export type AggregationsResult<A extends Aggregations> = { _doc_count: number } & { [N in keyof A]: AggregationResult<A[N]> };

// ---- indexes, admin ---------------------------------------------------------

export interface IndexSettings {
  number_of_shards?: number;
  number_of_replicas?: number;
}

/** A field's options (API.md §8.2); the schema nests them by field path. */
export type Schema = { [fieldOrOption: string]: unknown };

export interface IndexDefinition {
  _settings?: IndexSettings;
  _schema?: Schema;
}

/** `GET /idx/` (API.md §7.2). */
export interface IndexDescription {
  _settings: IndexSettings & { shards?: string[][] };
  _schema: Schema;
}

/** `INFO /idx/` (API.md §7.4). */
export interface IndexInfo {
  endpoint: string;
  doc_count: number;
  last_id: number;
  doc_del: number;
  av_length: number;
  doc_len_lower: number;
  doc_len_upper: number;
  has_positions: boolean;
  shards: string[];
  uuid?: string;
  revision?: number;
}

/** `INFO /idx/<id>` (API.md §5.8). */
export interface DocumentInfo {
  docid: number;
  version: number;
  shard?: number;
  data: Array<{ content_type: string; type: string; volume?: number; offset?: number; size?: string | number }>;
  terms: Record<string, unknown>;
  values: Record<string, unknown>;
}

/** A stored-content entry of a dumped document (API.md §7.6). */
export interface DumpedContent {
  _content_type: string;
  _type: 'stored';
  /** Base64. */
  _blob: string;
}

/** A document as DUMP writes it and RESTORE reads it. */
export type DumpItem<T = JsonObject> = T & { _id: DocumentId; _data?: DumpedContent[] };

/** `PUT /.templates/<name>` (API.md §16.1). */
export interface Template {
  _patterns: string[];
  _priority?: number;
  _settings?: IndexSettings;
  _schema?: Schema;
}

/** `PUT /.aliases/<name>` (API.md §16.2). */
export interface Alias {
  _indexes: string[];
  _write_index?: string;
}

export type KeyAction = 'read' | 'search' | 'write' | 'admin';

/** `POST /.keys/` (API.md §16.3). */
export interface KeyDefinition {
  _name: string;
  _actions: KeyAction[];
  _indexes?: string[];
  /** ISO 8601. */
  _expires_at?: string;
}

/** A key as listed: never its secret. */
export interface ApiKey {
  _name: string;
  _actions: KeyAction[];
  _indexes: string[];
  _expires_at: string | null;
  _created_at: string;
}

/** The answer of `POST /.keys/`: the only one that carries the secret. */
export interface CreatedApiKey extends ApiKey {
  _key: string;
}

/** A shard copy of `GET /.nodes`: `seq` and `documents` as its node last reported them. */
export interface ShardCopy {
  index: string;
  shard: number;
  primary: boolean;
  seq?: number;
  documents?: number;
  in_sync?: boolean;
}

/** `GET /.nodes` (API.md §12.2): inactive nodes carry only `name` and `active`. */
export interface NodeInfo {
  name: string;
  active: boolean;
  leader?: boolean;
  local?: boolean;
  host?: string;
  http_port?: number;
  role?: string;
  shards?: ShardCopy[];
}

/** `GET /` (API.md §12.1). */
export interface ServerInfo {
  name: string;
  cluster_name: string;
  server: string;
  versions: Record<string, string>;
  options: Record<string, unknown>;
  nodes: NodeInfo[];
  state: 'READY' | 'SETUP' | 'JOINING' | 'WAITING' | 'BAD';
}

/** `GET /readyz`. */
export interface Readiness {
  status: 'ready' | 'not ready';
  reason?: string;
}

/** Stored content as read back: byte-exact, with its type. */
export interface Content {
  contentType: string;
  bytes: Buffer;
}
