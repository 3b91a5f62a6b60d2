/**
 * The query AST: what a `_query` body value (API.md §9.3) and query strings
 * (§9.4) parse into, independent of any shard, schema or statistics (Tantivy's
 * `Query` level). A Weight binds it to one shard's schema and statistics.
 *
 * Plain tagged objects of strings, numbers, booleans and arrays only: the AST
 * crosses RPC as msgpack. Optional properties are omitted, never `undefined`.
 */

/** Compound operators of §9.3.2 (`and_not`: first minus the others; `not`: none of the children). */
export type BoolOp = 'and' | 'or' | 'not' | 'and_not' | 'xor' | 'and_maybe' | 'filter' | 'elite_set' | 'max' | 'synonym';

export type Query =
  | { readonly kind: 'all' }
  | { readonly kind: 'none' }
  /** `path` null: global terms (§8.2 global modes). */
  | { readonly kind: 'field'; readonly path: readonly string[] | null; readonly value: LeafValue }
  | { readonly kind: 'bool'; readonly op: BoolOp; readonly children: readonly Query[] };

/**
 * Default operator of a text string: `or` for plain strings, else the
 * operator key that carried it (`{"_near": "a b"}`).
 */
export type TextOp = 'or' | 'and' | 'near' | 'phrase' | 'elite_set' | 'synonym' | 'max';

/** How a word (or a keyword value) matches, from its suffix (§9.3.1). */
export type MatchKind = 'exact' | 'wildcard' | 'prefix' | 'fuzzy';

/**
 * A word or whole keyword value with its pattern: `t*` (or `*`/`?` inside,
 * not leading) → wildcard, `t` kept with its wildcards; `t**` → prefix `t`;
 * `t~`/`t~N` → fuzzy `t`, distance N (default 2). `distance` is 0 unless fuzzy.
 */
export interface Pattern {
  readonly match: MatchKind;
  readonly text: string;
  readonly distance: number;
}

/**
 * A parsed text string (§9.3.1). Words are raw, as typed (not lower-cased or
 * tokenized: the Weight analyses them with the field's analyzer, where a word
 * such as `t-shirt` becomes a phrase).
 */
export type TextNode =
  | { readonly kind: 'all' }
  | { readonly kind: 'none' }
  /** `keepStopWords`: the word was `+t` or `-t`, where stop words count (§9.3.1). */
  | { readonly kind: 'word'; readonly pattern: Pattern; readonly keepStopWords: boolean }
  | { readonly kind: 'phrase'; readonly words: readonly string[] }
  /**
   * `and_not`: first minus the others; `and_maybe`: first, weighted by the
   * others; `near`/`phrase`: all words within 10 positions / in order.
   */
  | { readonly kind: 'bool'; readonly op: TextOp | 'and_not' | 'and_maybe'; readonly children: readonly TextNode[] };

/** Casts of §9.3 (`{"_<cast>": v}`), names kept as written. */
export type CastName =
  | '_integer' | '_positive' | '_float' | '_boolean' | '_keyword' | '_text' | '_string' | '_term'
  | '_datetime' | '_date' | '_time' | '_timedelta' | '_uuid';

/** Geometry keys of §8.6. */
export type ShapeName =
  | '_point' | '_circle' | '_convex' | '_polygon' | '_chull' | '_multipoint' | '_multicircle' | '_multiconvex'
  | '_multipolygon' | '_multichull' | '_geometrycollection' | '_ewkt';

/** A range end: a JSON number or a string (number, date with math, time, text); null = open. */
export type RangeEnd = string | number | null;

export type LeafValue =
  /** `"*"`: the field has a value. */
  | { readonly kind: 'exists' }
  /** A number or boolean: equality. */
  | { readonly kind: 'scalar'; readonly value: number | boolean }
  /**
   * A string. Text fields use `text` (parsed with default operator `op`);
   * keyword fields use `keyword` (the whole value and its suffix pattern);
   * other types convert `value`.
   */
  | { readonly kind: 'string'; readonly value: string; readonly op: TextOp; readonly text: TextNode; readonly keyword: Pattern }
  /** `{"_<cast>": v}`: `value` is v's own leaf, to convert first. */
  | { readonly kind: 'cast'; readonly cast: CastName; readonly value: LeafValue }
  /** `{"_datetime": {"_year": …}}` (§8.5): only under a `_date`/`_datetime` cast. */
  | { readonly kind: 'date_parts'; readonly parts: Readonly<Record<string, number>> }
  /** Inclusive range, either end open. */
  | { readonly kind: 'range'; readonly from: RangeEnd; readonly to: RangeEnd }
  /** `{<shape>}` (equal, `within` false) or `{"_in": {<shape>}}` (inside). `value` is the shape's JSON, unvalidated. */
  | { readonly kind: 'shape'; readonly shape: ShapeName; readonly value: unknown; readonly within: boolean };

/** One sort key of §9.5. `path` is dotted; `_score` is relevance. */
export interface SortKey {
  readonly path: string;
  readonly order: 'asc' | 'desc';
  readonly value?: unknown;
  readonly metric?: string;
}

export interface Pagination {
  readonly offset: number;
  readonly limit: number;
  readonly checkAtLeast: number;
}
