/**
 * CORS (API.md §16.3), for browsers calling the API from the origins given
 * with `--cors-origin`. Two parts, both run by the coordinator's request
 * handler:
 *
 * - a preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`)
 *   is answered here, before anything else of the request runs (an API key is
 *   not asked for: browsers never send credentials on a preflight): 204 with
 *   the methods the API serves (the custom ones included), the headers it
 *   reads, and how long the browser may cache that; an origin not listed
 *   gets 403 `cors_origin_not_allowed` and no allow headers;
 * - every other response to a listed origin carries
 *   `Access-Control-Allow-Origin` and the headers a script may read. A request
 *   from an origin not listed is served as usual, without them: the browser
 *   keeps the answer from the page.
 *
 * With a list of origins every response carries `Vary: Origin` (a cache must
 * not hand one origin's answer to another); with `*` the answer does not
 * depend on the origin. No credentials mode (cookies): the API authenticates
 * with `Authorization`, which a page sends itself.
 */
import { TesseraError } from '@tessera/errors';
import type { HttpRequest, HttpResponse } from '@tessera/http';

/** `*`: any origin; else the serialized origins (`https://app.example.com:8443`) allowed. */
export type CorsOrigins = '*' | ReadonlySet<string>;

/** How long a browser may keep a preflight's answer, seconds (Chromium caps it at 7200). */
export const CORS_MAX_AGE_S = 600;

/** Request headers the API reads, allowed on every preflight (beside those a preflight asks for). */
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Accept', 'X-HTTP-Method-Override', 'HTTP-Method-Override', 'X-Request-Id'];

/** Response headers a script may read beyond the CORS-safelisted ones. */
const EXPOSED_HEADERS = 'Location, X-Request-Id, Allow, WWW-Authenticate, Content-Encoding';

/** RFC 9110 token: what a header name in `Access-Control-Request-Headers` must be. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export const corsErrors = {
  originNotAllowed: (origin: string) => new TesseraError('cors_origin_not_allowed', 403,
    `Origin '${origin}' is not allowed by this server's --cors-origin`),
};

/**
 * `--cors-origin`: `*`, or origins separated by commas, each written as a
 * browser sends it (scheme, host, port if not the default; no path, no
 * trailing slash). '' → undefined (no CORS). Throws an Error saying what is
 * wrong with which item.
 */
export function parseCorsOrigins(text: string): CorsOrigins | undefined {
  const items = text.split(',').map((item) => item.trim()).filter((item) => item.length > 0);
  if (items.length === 0) return undefined;
  if (items.includes('*')) {
    if (items.length > 1) throw new Error(`'*' allows every origin: give it alone, not with ${items.filter((i) => i !== '*').join(', ')}`);
    return '*';
  }
  const origins = new Set<string>();
  for (const item of items) {
    const url = URL.canParse(item) ? new URL(item) : undefined;
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new Error(`'${item}' is not an origin: expected scheme://host[:port] with http or https`);
    }
    if (url.origin !== item) throw new Error(`'${item}' is not an origin as a browser sends it: write ${url.origin}`);
    origins.add(item);
  }
  return origins;
}

export class CorsPolicy {
  /**
   * @param origins who may call
   * @param methods every method the API serves, as its `Allow` header lists them (the one table, so the two cannot drift)
   */
  constructor(private readonly origins: CorsOrigins, private readonly methods: string) {}

  /** A CORS preflight: `OPTIONS` with `Origin` and `Access-Control-Request-Method`. */
  static isPreflight(req: HttpRequest): boolean {
    return req.method === 'OPTIONS' && req.headers.origin !== undefined && req.headers['access-control-request-method'] !== undefined;
  }

  /** The answer to a preflight (see isPreflight); throws 403 `cors_origin_not_allowed` for an origin not listed. */
  preflight(req: HttpRequest): HttpResponse {
    const origin = req.headers.origin as string;
    if (!this.allows(origin)) throw corsErrors.originNotAllowed(origin);
    const headers: Record<string, string | number> = {
      'Access-Control-Allow-Origin': this.origins === '*' ? '*' : origin,
      'Access-Control-Allow-Methods': this.methods,
      'Access-Control-Allow-Headers': allowedHeaders(req.headers['access-control-request-headers']),
      'Access-Control-Max-Age': CORS_MAX_AGE_S,
    };
    if (this.origins !== '*') headers.Vary = 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers';
    return { status: 204, headers };
  }

  /** The CORS headers of any other response (in place); a forwarded response's own ones are replaced, not doubled. */
  decorate(req: HttpRequest, response: HttpResponse): void {
    const headers = response.headers ?? (response.headers = {});
    if (this.origins !== '*') addVary(headers, 'Origin');
    const origin = req.headers.origin;
    if (origin === undefined || !this.allows(origin)) return;
    setHeader(headers, 'Access-Control-Allow-Origin', this.origins === '*' ? '*' : origin);
    setHeader(headers, 'Access-Control-Expose-Headers', EXPOSED_HEADERS);
  }

  private allows(origin: string): boolean {
    return this.origins === '*' || this.origins.has(origin);
  }
}

/**
 * The headers the API reads, and those the preflight asks for: any header
 * name is allowed (none grants more than `Authorization`, which a page may
 * send anyway); what is not a header name is left out.
 */
function allowedHeaders(requested: string | undefined): string {
  const out = [...ALLOWED_HEADERS];
  const seen = new Set(out.map((name) => name.toLowerCase()));
  for (const raw of (requested ?? '').split(',')) {
    const name = raw.trim().toLowerCase();
    if (name.length === 0 || !TOKEN.test(name) || seen.has(name)) continue;
    seen.add(name);
    out.push(name);
  }
  return out.join(', ');
}

/** Set `name`, dropping the same header in another spelling (a forwarded response's headers are lower case). */
function setHeader(headers: Record<string, string | number>, name: string, value: string): void {
  const lower = name.toLowerCase();
  for (const key of Object.keys(headers)) if (key !== name && key.toLowerCase() === lower) delete headers[key];
  headers[name] = value;
}

/** Add `token` to the response's `Vary` (whatever its spelling) unless it is there. */
function addVary(headers: Record<string, string | number>, token: string): void {
  let current = '';
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() !== 'vary') continue;
    current = String(headers[key]);
    delete headers[key];
  }
  const tokens = current.split(',').map((t) => t.trim()).filter((t) => t.length > 0);
  if (!tokens.some((t) => t.toLowerCase() === token.toLowerCase() || t === '*')) tokens.push(token);
  headers.Vary = tokens.join(', ');
}
