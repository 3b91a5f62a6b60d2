/**
 * @tessera/client: a typed TypeScript client of Tessera's REST API, on
 * undici. See README.md for the first steps and docs/client.md.
 */
export { AdminCollection, DEFAULT_URL, IndexClient, KeyCollection, SearchCursor, Tessera } from './client.js';
export type { ClientOptions, ContentOptions, ImportOptions, ReadOptions, UpdateOptions, WriteOptions } from './client.js';
export {
  BadRequestError, ClientError, ConflictError, errorFromResponse, ForbiddenError, NotFoundError, ServerError, TesseraError,
  UnauthorizedError, UnavailableError,
} from './errors.js';
export type { ErrorBody, ScriptLocation } from './errors.js';
export type { BatchLimits, ImportFailure, ImportProgress, ImportSummary, RestoreReport } from './bulk.js';
export { DEFAULT_PAGE_SIZE } from './cursor.js';
export type * from './types.js';
