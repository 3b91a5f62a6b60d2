/**
 * How the client commands (`tessera import`, `dump`, `snapshot`) reach a
 * server: its URL (`--url`, else TESSERA_URL, else the default), and a
 * master key (API.md §16.3): `--api-key KEY`, else TESSERA_API_KEY (the
 * same variable the server reads), sent as `Authorization: Bearer KEY`.
 */

export const DEFAULT_URL = 'http://127.0.0.1:8880';
/** The server URL when `--url` is not given. */
export const URL_ENV = 'TESSERA_URL';
export const API_KEY_ENV = 'TESSERA_API_KEY';

/** The request headers carrying the key; none without one. */
export function authHeaders(apiKey: string | undefined): Record<string, string> {
  return apiKey === undefined || apiKey === '' ? {} : { authorization: `Bearer ${apiKey}` };
}

/** What to add to a 401 or 403 answer's message so the user knows what to change. */
export function authHint(status: number, apiKey: string | undefined): string {
  if (status === 401) {
    return apiKey === undefined || apiKey === ''
      ? ` (the server needs an API key: give it with --api-key or ${API_KEY_ENV})`
      : ' (the server refused the API key given)';
  }
  if (status === 403) return ' (the API key given does not allow this on that index)';
  return '';
}
