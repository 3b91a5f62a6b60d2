/**
 * @tessera/search-model — what a search is, shared by the coordinator and
 * the engine (DESIGN.md "search model"): the query AST with the `_query` DSL
 * and query-string parsers, sort keys, the pagination rule, `_search_after`
 * cursors, `_highlight` requests, and aggregation requests, per-shard
 * partials and their exact merge. Every parser validates
 * fully and throws only 400 TesseraErrors, so the coordinator parses a
 * request once and sends the shards plain, msgpack-able values.
 */
export * from './query/index.js';
export * from './aggregations/index.js';
export * from './highlight/index.js';
