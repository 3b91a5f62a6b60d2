/**
 * The dashboard's calls to the server it was loaded from. With a master key
 * configured (API.md §16.3) every call needs `Authorization: Bearer <key>`:
 * the key the user typed is kept in sessionStorage (this tab only, gone when
 * it closes) and sent on each call; a 401 asks for it again.
 */
const KEY_ITEM = 'tessera.apiKey';

/** A refused or failed call: the server's error `code` (docs/errors.md) and message. */
export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

export function storedKey(): string | undefined {
  return sessionStorage.getItem(KEY_ITEM) ?? undefined;
}

export function storeKey(key: string | undefined): void {
  if (key === undefined) sessionStorage.removeItem(KEY_ITEM);
  else sessionStorage.setItem(KEY_ITEM, key);
}

/** Listeners told when a call is refused for want of a (valid) key. */
const unauthorizedListeners = new Set<() => void>();
export function onUnauthorized(listener: () => void): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

async function send(method: string, path: string, body: unknown, accept: string): Promise<Response> {
  const headers: Record<string, string> = { Accept: accept };
  const key = storedKey();
  if (key !== undefined) headers.Authorization = `Bearer ${key}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body === undefined ? null : JSON.stringify(body) });
  if (response.ok) return response;
  let code = 'http_error';
  let message = `${response.status} ${response.statusText}`;
  try {
    const error = (await response.json()) as { code?: string; message?: string };
    code = error.code ?? code;
    message = error.message ?? message;
  } catch {
    // Not a JSON error body: the status says it.
  }
  if (response.status === 401) unauthorizedListeners.forEach((listener) => listener());
  throw new ApiError(response.status, code, message);
}

/** A JSON call: `SEARCH`, `COUNT` and the other methods are sent as they are (fetch sends any token). */
export async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  return (await send(method, path, body, 'application/json')).json() as Promise<T>;
}

/** The Prometheus text of `/:metrics`. */
export async function metricsText(): Promise<string> {
  return (await send('GET', '/:metrics', undefined, 'text/plain')).text();
}

/** An index path (`/books/`, `/logs/2026/`) as a URL path: each segment encoded, the slashes kept. */
export function indexUrl(index: string): string {
  return index.split('/').map(encodeURIComponent).join('/');
}

/** A document's URL: its ID percent-encoded, dots too (a raw `.` would start a selector, API.md §1.3). */
export function documentUrl(index: string, id: string): string {
  return `${indexUrl(index)}${encodeURIComponent(id).replace(/\./g, '%2E')}`;
}
