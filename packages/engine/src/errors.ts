/**
 * Error catalogue of the engine package. Every error a shard throws across the
 * package boundary is one of these; `code` is stable (callers match on it) and
 * `status` is what the coordinator answers with.
 */
import { TesseraError } from '@tessera/errors';

export const engineErrors = {
  versionConflict: () => new TesseraError('version_conflict', 409, 'Version mismatch!'),
  documentNotFound: () => new TesseraError('document_not_found', 404, 'Document not found'),
  patchFailed: (message: string) => new TesseraError('patch_failed', 400, message),
  invalidDocument: (message: string, cause?: unknown) =>
    new TesseraError('invalid_document', 400, message, cause === undefined ? undefined : { cause }),
  invalidDocumentId: (why: string) => new TesseraError('invalid_document_id', 400, `Invalid document ID: ${why}`),
  invalidWrite: (why: string) => new TesseraError('invalid_write', 400, `Invalid write: ${why}`),
  /**
   * A batch (or a read) could not reach LevelDB: I/O error, database closed
   * under us; a full disk (or quota) is 507 `storage_full`, so a client or an
   * operator knows that retrying will not help until space is freed.
   */
  storageUnavailable: (cause: unknown) => (isDiskFull(cause)
    ? storageFull(cause)
    : new TesseraError('storage_unavailable', 503, `Storage unavailable: ${describeCause(cause)}`, { cause })),
  shardClosed: () => new TesseraError('shard_closed', 503, 'Shard is closed'),
  invalidOplogRead: (why: string) => new TesseraError('invalid_oplog_read', 400, `Invalid operation log read: ${why}`),
  oplogTrimmed: (afterSeq: number, firstSeq: number) =>
    new TesseraError('oplog_trimmed', 410,
      `Operation log no longer holds entries after seq ${afterSeq} (first kept: ${firstSeq}); a full copy is needed`),
  /** A write or replicated change under a primary term older than one this copy has seen: it comes from a demoted primary's era. */
  stalePrimaryTerm: (term: number, current: number) =>
    new TesseraError('stale_primary_term', 503,
      `Primary term ${term} is older than term ${current} this shard copy has seen: the shard has a new primary; retry`),
  docidsExhausted: () => new TesseraError('docids_exhausted', 507, 'Shard has used every #docid'),
  /** A write with a script reached a shard opened without a script runner. */
  scriptsUnavailable: () => new TesseraError('scripts_unavailable', 503, 'This shard copy cannot run scripts'),
  /**
   * A script's or a JSON Patch's result has fields the write's schema lacks:
   * the coordinator folds `details.scriptResult` into the index schema and
   * writes again.
   */
  resultSchemaChange: (result: DocumentBodyLike, by: 'script' | 'patch') =>
    new TesseraError('script_schema_change', 409, `The ${by} added fields the index schema does not have yet`,
      { details: { scriptResult: result } }),
  /** A replicated change links a blob this copy neither holds nor received: it must catch up from the primary's log. */
  contentMissing: (id: unknown, type: string) =>
    new TesseraError('content_missing', 503, `Replicated document ${String(id)} links '${type}' content this copy does not hold`),
  invalidOption: (name: string, why: string) => new TesseraError('invalid_option', 500, `Invalid shard option '${name}': ${why}`),
  /**
   * What the shard copy stores failed its checksums: a database log or
   * manifest (opening would let LevelDB drop the records silently,
   * store/log-check.ts), a table (LevelDB would read it unchecked,
   * store/table-check.ts) or a segment (segments/segment-store.ts). `what`
   * names the file or segment.
   */
  storeCorrupted: (what: string, why: string) =>
    new TesseraError('store_corrupted', 500,
      `Shard store is corrupted: ${what}: ${why}; the shard copy is not opened (restore it from a replica or a dump)`),
  formatUnsupported: (path: string, format: unknown) =>
    new TesseraError('shard_format_unsupported', 500, `Shard at ${path} has unsupported format ${String(format)}`),
};

type DocumentBodyLike = Record<string, unknown>;

/** 507: the disk (or the quota) of the data directory is full; reads go on, writes resume once space is freed. */
export function storageFull(cause: unknown): TesseraError {
  return new TesseraError('storage_full', 507, `Insufficient storage: ${describeCause(cause)}; free disk space, then retry`, { cause });
}

/**
 * Whether an error (or one it was caused by) is a full disk or quota: Node's
 * ENOSPC/EDQUOT, or LevelDB's IO error, which carries only strerror's text.
 */
export function isDiskFull(cause: unknown): boolean {
  for (let err = cause, depth = 0; err instanceof Error && depth < 5; err = err.cause, depth++) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOSPC' || code === 'EDQUOT' || /No space left on device|Disk quota exceeded/.test(err.message)) return true;
  }
  return false;
}

function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    const inner = cause.cause instanceof Error ? ` (${cause.cause.message})` : '';
    return typeof code === 'string' ? `${code}: ${cause.message}${inner}` : `${cause.message}${inner}`;
  }
  return String(cause);
}
