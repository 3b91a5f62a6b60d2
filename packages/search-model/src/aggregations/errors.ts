/**
 * Error catalogue of aggregations (API.md §10). A bad `_aggs` is a 400
 * `invalid_aggregation` naming the aggregation and the option at fault; a
 * request whose partial result would exceed AGGREGATION_PARTIAL_ENTRIES_MAX
 * is a 400 `aggregation_too_large`.
 */
import { TesseraError } from '@tessera/errors';

export const aggregationErrors = {
  invalid: (message: string) => new TesseraError('invalid_aggregation', 400, message),
  tooLarge: (limit: number) =>
    new TesseraError('aggregation_too_large', 400,
      `Aggregations would keep more than ${limit} buckets and distinct values on one shard; narrow the query or the aggregation`),
};
