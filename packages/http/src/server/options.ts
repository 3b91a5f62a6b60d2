/**
 * HTTP server options: defaults (API.md §13), merging and validation. Every
 * limit is checked at startup, including how limits relate to each other.
 */
import { createSecureContext } from 'node:tls';
import type { HttpServerOptions } from './types.js';
import { serverErrors } from './errors.js';

export const DEFAULT_HTTP_SERVER_OPTIONS: Readonly<HttpServerOptions> = Object.freeze({
  headerBytesMax: 16 * 1024,
  urlBytesMax: 8 * 1024,
  bodyBytesMax: 64 * 1024 * 1024,
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 30_000,
  idleTimeoutMs: 60_000,
  pipelineDepthMax: 64,
  serverName: 'Tessera/0.1.0',
});

/** Time allowed to `close()` for in-flight requests when no grace period is given. */
export const DEFAULT_CLOSE_GRACE_MS = 10_000;

const POSITIVE_INTEGERS = [
  'headerBytesMax', 'urlBytesMax', 'headersTimeoutMs', 'bodyTimeoutMs', 'idleTimeoutMs', 'pipelineDepthMax',
] as const;

/** Defaults overlaid with the given options (undefined values keep the default), validated. */
export function resolveHttpServerOptions(options: Partial<HttpServerOptions>): HttpServerOptions {
  const resolved: HttpServerOptions = { ...DEFAULT_HTTP_SERVER_OPTIONS };
  for (const key of Object.keys(options) as (keyof HttpServerOptions)[]) {
    const value = options[key];
    if (value !== undefined) (resolved as unknown as Record<string, unknown>)[key] = value;
  }
  for (const key of POSITIVE_INTEGERS) {
    const value = resolved[key];
    if (!Number.isSafeInteger(value) || value <= 0) throw serverErrors.invalidOption(key, 'must be a positive integer');
  }
  const body = resolved.bodyBytesMax;
  if (typeof body !== 'function' && (!Number.isSafeInteger(body) || body < 0)) {
    throw serverErrors.invalidOption('bodyBytesMax', 'must be a non-negative integer or a function of the request head');
  }
  // The request-target is part of the head: a larger URL limit could never be reached.
  if (resolved.urlBytesMax > resolved.headerBytesMax) {
    throw serverErrors.invalidOption('urlBytesMax', `must not exceed headerBytesMax (${resolved.headerBytesMax})`);
  }
  if (typeof resolved.serverName !== 'string' || /[^\x20-\x7e]/.test(resolved.serverName)) {
    throw serverErrors.invalidOption('serverName', 'must be printable ASCII');
  }
  if (resolved.bodiesBytesMax !== undefined && (!Number.isSafeInteger(resolved.bodiesBytesMax) || resolved.bodiesBytesMax <= 0)) {
    throw serverErrors.invalidOption('bodiesBytesMax', 'must be a positive integer');
  }
  if (resolved.streamBody !== undefined && typeof resolved.streamBody !== 'function') {
    throw serverErrors.invalidOption('streamBody', 'must be a function');
  }
  if (resolved.onResponse !== undefined && typeof resolved.onResponse !== 'function') {
    throw serverErrors.invalidOption('onResponse', 'must be a function');
  }
  if (resolved.onError !== undefined && typeof resolved.onError !== 'function') {
    throw serverErrors.invalidOption('onError', 'must be a function');
  }
  if (resolved.tls !== undefined) {
    if (resolved.tls === null || typeof resolved.tls !== 'object') throw serverErrors.invalidOption('tls', 'must be secure-context options');
    try {
      createSecureContext(resolved.tls);
    } catch (err) {
      throw serverErrors.invalidOption('tls', (err as Error).message);
    }
  }
  return resolved;
}
