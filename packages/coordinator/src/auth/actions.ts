/**
 * What a request needs of an API key (API.md §16.3, docs/security.md): every
 * endpoint maps to exactly one action — `read`, `search`, `write` or `admin`
 * — on the indexes its path names, as addressed (an alias is checked under
 * its own name, not the indexes it resolves to). This table is the only
 * place that says so; the coordinator consults it once per request, before
 * any handler runs, so no handler can be forgotten. A request it does not
 * know needs `admin`.
 */
import { isReservedIndex } from '../admin/reserved.js';
import { parsePath } from '../request/path.js';

export const ACTIONS = ['read', 'search', 'write', 'admin'] as const;
export type Action = (typeof ACTIONS)[number];

/**
 * What one request needs: nothing (the health endpoints), the master key
 * (`/.keys/`), or an action on every index named (none for the root and the
 * cluster endpoints).
 */
export type Access =
  | { kind: 'open' }
  | { kind: 'master' }
  | { kind: 'action'; action: Action; indexes: readonly string[] };

const OPEN: Access = { kind: 'open' };
const MASTER: Access = { kind: 'master' };
const CLUSTER_ADMIN: Access = { kind: 'action', action: 'admin', indexes: [] };

/** The endpoints outside the index and document grammar. */
const HEALTH_PATHS = new Set(['/healthz', '/readyz']);
const METRICS_PATHS = new Set(['/:metrics', '/metrics']);
/** The API's description (API.md §16.4): an admin read, as the cluster's own endpoints are. */
const OPENAPI_PATH = '/.openapi';
/**
 * The dashboard's page and files (API.md §16.4): static, holding no data,
 * so GET and HEAD need no key; the page asks for one and sends it on its
 * own calls (as Kibana and Meilisearch serve their consoles).
 */
function isDashboardPath(rawPath: string): boolean {
  return rawPath === '/.dashboard' || rawPath.startsWith('/.dashboard/');
}

/** Document methods by action (API.md §5, §6): the rest are unknown here, hence admin. */
const DOCUMENT_ACTIONS: ReadonlyMap<string, Action> = new Map([
  ['GET', 'read'], ['HEAD', 'read'], ['INFO', 'read'], ['OPTIONS', 'read'],
  ['PUT', 'write'], ['POST', 'write'], ['UPDATE', 'write'], ['UPSERT', 'write'], ['PATCH', 'write'], ['DELETE', 'write'],
  ['RESTORE', 'write'],
  ['DUMP', 'admin'],
]);

/** Index methods by action (API.md §7, §9, §10): creating, changing or deleting the index itself is admin. */
const INDEX_ACTIONS: ReadonlyMap<string, Action> = new Map([
  ['GET', 'read'], ['HEAD', 'read'], ['INFO', 'read'], ['OPTIONS', 'read'],
  ['SEARCH', 'search'], ['COUNT', 'search'],
  ['POST', 'write'], ['RESTORE', 'write'], ['COMMIT', 'write'],
  ['PUT', 'admin'], ['UPDATE', 'admin'], ['UPSERT', 'admin'], ['DELETE', 'admin'], ['DUMP', 'admin'],
]);

/** The root (`GET /`, API.md §12.1): server information, no index. */
const ROOT_ACTIONS: ReadonlyMap<string, Action> = new Map([['GET', 'read'], ['HEAD', 'read'], ['OPTIONS', 'read']]);

/** `/.keys`, `/.keys/`, `/.keys/<name>`. */
export function isKeysPath(rawPath: string): boolean {
  return rawPath === '/.keys' || rawPath.startsWith('/.keys/');
}

/** What the request `method rawPath` (effective method, path without its query) needs. */
export function accessOf(method: string, rawPath: string): Access {
  if (HEALTH_PATHS.has(rawPath) || isDashboardPath(rawPath)) return method === 'GET' || method === 'HEAD' ? OPEN : CLUSTER_ADMIN;
  if (METRICS_PATHS.has(rawPath) || rawPath === OPENAPI_PATH) return CLUSTER_ADMIN;
  if (isKeysPath(rawPath)) return MASTER;
  // Templates, aliases, /.nodes and every other API root name (admin/reserved.ts).
  if (isReservedIndex(rawPath)) return CLUSTER_ADMIN;
  let indexes: readonly string[];
  let id: string | undefined;
  try {
    ({ indexes, id } = parsePath(rawPath, { allowWildcards: method === 'SEARCH' || method === 'COUNT' }));
  } catch {
    // A path the API cannot read names nothing a key could be scoped to.
    return CLUSTER_ADMIN;
  }
  const table = id !== undefined ? DOCUMENT_ACTIONS : indexes.length > 0 ? INDEX_ACTIONS : ROOT_ACTIONS;
  return { kind: 'action', action: table.get(method) ?? 'admin', indexes };
}

/** Where each kind of endpoint is shown in the reference, by a path of that kind. */
const REFERENCE_ENDPOINTS: ReadonlyArray<[string, string]> = [
  ['`/` (server information)', '/'],
  ['`/<index>/` (or a list `/a,b/`; with SEARCH and COUNT a trailing `*`)', '/index/'],
  ['`/<index>/<id>` (a document, its stored content)', '/index/id'],
  ['`/healthz`, `/readyz`', '/healthz'],
  ['`/:metrics`, `/metrics`', '/:metrics'],
  ['`/.openapi` (the OpenAPI document)', '/.openapi'],
  ['`/.dashboard/…` (the dashboard\'s page and files; `/` for a browser)', '/.dashboard/'],
  ['`/.templates/…`, `/.aliases/…`', '/.templates/'],
  ['`/.nodes` and the other API names', '/.nodes'],
  ['`/.keys/…`', '/.keys/'],
];

/**
 * The endpoint → action table of docs/security.md (between its
 * `actions-reference` markers), generated from `accessOf` itself so the page
 * cannot drift from what the server enforces: a test compares the two.
 * `methods`: the known methods (@tessera/http); any other is shown as such.
 */
export function actionsReference(methods: readonly string[]): string {
  const columns = ['no key', ...ACTIONS, 'master key only'];
  const columnOf = (access: Access) => (access.kind === 'open' ? 'no key' : access.kind === 'master' ? 'master key only' : access.action);
  const rows = REFERENCE_ENDPOINTS.map(([label, path]) => {
    const cells = new Map<string, string[]>(columns.map((c) => [c, []]));
    for (const method of methods) cells.get(columnOf(accessOf(method, path)))?.push(method);
    cells.get(columnOf(accessOf('ANY-OTHER', path)))?.push('any other');
    const cell = (c: string) => {
      const listed = cells.get(c) as string[];
      return listed.length === methods.length + 1 ? 'every method' : listed.join(', ');
    };
    return `| ${label} | ${columns.map(cell).join(' | ')} |`;
  });
  return [`| endpoint | ${columns.join(' | ')} |`, `|---|${columns.map(() => '---').join('|')}|`, ...rows].join('\n');
}
