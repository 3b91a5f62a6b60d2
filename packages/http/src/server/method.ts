/**
 * Effective method of a request (API.md §3.2): the request line's method,
 * replaced by an `X-HTTP-Method-Override` / `HTTP-Method-Override` header
 * (real method POST) or by a `:method` suffix on the path's last segment
 * (real method GET or POST), for clients that can only send GET and POST.
 */
import { KNOWN_METHODS, knownMethod } from '../parser/tokens.js';
import { serverErrors } from './errors.js';

export { KNOWN_METHODS };

export interface ResolvedMethod {
  /** Effective method, upper case (interned when known). */
  method: string;
  /** Raw path without a `:method` mapping suffix. */
  path: string;
}

/**
 * Resolve the effective method and path. Pure; throws a TesseraError (400 for
 * misuse, 405 for an unknown override method).
 *
 * The header wins over a mapping: the mapping suffix is still removed from
 * the path, but then the mapping's GET/POST rule does not apply.
 */
export function resolveMethod(
  originalMethod: string,
  path: string,
  headers: Readonly<Record<string, string | undefined>>,
): ResolvedMethod {
  const real = knownMethod(originalMethod) ?? originalMethod.toUpperCase();

  let mapped: string | undefined;
  let mappedPath = path;
  const colon = path.lastIndexOf(':');
  if (colon !== -1 && colon > path.lastIndexOf('/')) {
    mapped = knownMethod(path.slice(colon + 1));
    if (mapped !== undefined) mappedPath = path.slice(0, colon);
  }

  const override = headers['x-http-method-override'] ?? headers['http-method-override'];
  if (override !== undefined) {
    const wanted = override.trim().toUpperCase();
    if (real !== 'POST' && real !== wanted) throw serverErrors.overrideNeedsPost();
    const method = knownMethod(wanted);
    if (method === undefined) throw serverErrors.unknownMethod(wanted);
    return { method, path: mappedPath };
  }
  if (mapped !== undefined) {
    if (real !== 'GET' && real !== 'POST' && real !== mapped) throw serverErrors.mappingNeedsGetOrPost();
    return { method: mapped, path: mappedPath };
  }
  return { method: real, path };
}
