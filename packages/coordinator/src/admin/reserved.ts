/**
 * Root names of the API (API.md §16): no index, and no alias, may take them,
 * nor live below them (`PUT /.nodes/a/` → 400; `/.keys/` is answered by the
 * API keys' handlers, auth/key-handlers.ts, before any index path is read).
 */
const RESERVED_ROOTS = new Set(['.templates', '.aliases', '.keys', '.dashboard', '.openapi', '.nodes', '.snapshots']);

/** Is the canonical index path (`/a/b/`) one of the API's root names, or below one? */
export function isReservedIndex(path: string): boolean {
  const end = path.indexOf('/', 1);
  return path.charCodeAt(1) === 0x2e && RESERVED_ROOTS.has(path.slice(1, end < 0 ? undefined : end));
}
