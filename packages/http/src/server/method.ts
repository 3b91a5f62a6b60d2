/**
 * Effective method of a request (API.md §3.2): the request line's method,
 * replaced by an `X-HTTP-Method-Override` / `HTTP-Method-Override` header
 * (real method POST) or by a `:method` suffix on the path's last segment
 * (real method GET or POST), for clients that can only send GET and POST.
 */
import { internMethodAt, KNOWN_METHODS, knownMethod } from '../parser/tokens.js';
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
 * misuse, and for a known method spelled in another case on the request line).
 *
 * The request line's method is case-sensitive (RFC 9110 §9.1): `GET` is a
 * method, `get` is not. A known method in another case answers 400
 * `http_method_case` rather than 405, because the client almost certainly
 * meant the known method and 400 says what to fix; any other token is kept
 * as sent and left to the router (405 with `Allow`). The override header's
 * value and the `:method` suffix are not method tokens but names in the
 * request (API.md §3.2, where `:search` is the usual spelling) and stay
 * case-insensitive; an unknown override name is likewise left to the router.
 *
 * The header wins over a mapping: the mapping suffix is still removed from
 * the path, but then the mapping's GET/POST rule does not apply.
 */
export function resolveMethod(
  originalMethod: string,
  path: string,
  headers: Readonly<Record<string, string | undefined>>,
): ResolvedMethod {
  const real = requestLineMethod(originalMethod);

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
    return { method: knownMethod(wanted) ?? wanted, path: mappedPath };
  }
  if (mapped !== undefined) {
    if (real !== 'GET' && real !== 'POST' && real !== mapped) throw serverErrors.mappingNeedsGetOrPost();
    return { method: mapped, path: mappedPath };
  }
  return { method: real, path };
}

/** The request line's method: the interned known method, or the token as sent; 400 for a known method in another case. */
function requestLineMethod(originalMethod: string): string {
  const exact = internMethodAt(originalMethod, 0, originalMethod.length);
  if (exact !== undefined) return exact;
  const known = knownMethod(originalMethod);
  if (known !== undefined) throw serverErrors.methodCase(originalMethod, known);
  return originalMethod;
}
