/**
 * The one error shape of Tessera: a stable `code` callers match on, the HTTP
 * `status` it maps to, and a human `message`. Every package keeps a catalogue
 * of its own codes in `src/errors.ts` and throws only `TesseraError`s across
 * package boundaries; the RPC layer carries `code` and `status` intact so a
 * shard's 409 stays a 409 at the coordinator.
 */
import { STATUS_CODES } from 'node:http';

export interface ErrorShape {
  readonly code: string;
  readonly status: number;
  readonly message: string;
}

export class TesseraError extends Error implements ErrorShape {
  readonly code: string;
  readonly status: number;
  /** Extra fields merged into the JSON error body (e.g. `script: {name, line}`). */
  readonly details: Record<string, unknown> | undefined;
  /**
   * Response headers the error's answer carries (a 405's `Allow`). Local to
   * the process that answers: not carried over RPC.
   */
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(code: string, status: number, message: string,
    options?: { cause?: unknown; details?: Record<string, unknown>; headers?: Record<string, string> }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TesseraError';
    this.code = code;
    this.status = status;
    this.details = options?.details;
    this.headers = options?.headers;
  }

  /** Plain, serialisable form (for RPC frames and logs). */
  toJSON(): ErrorShape & { details?: Record<string, unknown> } {
    return this.details === undefined
      ? { code: this.code, status: this.status, message: this.message }
      : { code: this.code, status: this.status, message: this.message, details: this.details };
  }

  static fromJSON(value: unknown): TesseraError {
    if (isErrorShape(value)) {
      const details = (value as { details?: unknown }).details;
      return new TesseraError(value.code, value.status, value.message,
        details !== null && typeof details === 'object' ? { details: details as Record<string, unknown> } : undefined);
    }
    return new TesseraError('internal_error', 500, 'Malformed remote error');
  }
}

export function isErrorShape(value: unknown): value is ErrorShape {
  if (value === null || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return typeof v.code === 'string' && typeof v.status === 'number' && typeof v.message === 'string';
}

/** Reason phrase of an HTTP status (`409` → `Conflict`). */
export function reasonPhrase(status: number): string {
  return STATUS_CODES[status] ?? 'Unknown';
}

/**
 * Convert anything thrown into a TesseraError. Unknown errors become a 500
 * whose message does not leak internals (the caller logs the original).
 */
export function toTesseraError(err: unknown): TesseraError {
  if (err instanceof TesseraError) return err;
  if (isErrorShape(err)) return TesseraError.fromJSON(err);
  return new TesseraError('internal_error', 500, 'Internal server error', { cause: err });
}

/**
 * API.md §4.2 error body: reason phrase as `type`, "Reason: detail" as
 * message, and the catalogue `code` programs branch on (docs/errors.md).
 */
export function errorBody(err: ErrorShape & { details?: Record<string, unknown> | undefined }): Record<string, unknown> {
  const type = reasonPhrase(err.status);
  const body: Record<string, unknown> = { status: err.status, type, code: err.code, message: `${type}: ${err.message}` };
  if (err.details) for (const [k, v] of Object.entries(err.details)) body[k] = v;
  return body;
}
