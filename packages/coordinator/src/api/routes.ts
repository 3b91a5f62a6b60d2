/**
 * The route table (API.md §3.1, §12, §16): every resource kind, the methods
 * it serves, each method's handler and its description. It is the one source
 * of three things: the coordinator's dispatch (a Map lookup per request,
 * built once here), the `Allow` header of a 405 and of OPTIONS, and the
 * OpenAPI document (api/openapi.ts), which therefore cannot drift from what
 * the server answers.
 */
import type { HttpRequest, HttpResponse } from '@tessera/http';
import type { AdminHandlers } from '../admin/handlers.js';
import type { KeyHandlers } from '../auth/key-handlers.js';
import type { DumpHandler } from '../bulk/dump.js';
import type { RestoreHandler } from '../bulk/restore.js';
import type { SnapshotHandler } from '../bulk/snapshot.js';
import { extensionType, isContentBody } from '../documents/content.js';
import type { DocumentHandlers } from '../documents/handlers.js';
import { apiErrors } from '../errors.js';
import type { IndexHandlers } from '../indexes/handlers.js';
import type { RequestContext } from '../request/context.js';
import { render, type Reply } from '../response/respond.js';
import type { StaticFiles } from '../dashboard/static-files.js';
import type { SearchHandlers } from '../search/handlers.js';

/** What the handlers of the table reach: the coordinator's handlers and its few answers of its own. */
export interface ApiServices {
  documents: DocumentHandlers;
  indexes: IndexHandlers;
  restores: RestoreHandler;
  searches: SearchHandlers;
  dumps: DumpHandler;
  snapshots: SnapshotHandler;
  admin: AdminHandlers;
  keys: KeyHandlers;
  /** `GET /` (API.md §12.1), drilled by a selector (`/.nodes`). */
  root(ctx: RequestContext): Promise<unknown>;
  metricsText(): Promise<{ contentType: string; body: string }>;
  readiness(): Promise<{ ready: boolean; reason?: string }>;
  /** The OpenAPI document (api/openapi.ts), built once. */
  openapi(): unknown;
  /** The web dashboard's files (API.md §16.4), when the server was given them. */
  dashboard: StaticFiles | undefined;
}

/** Resources of the path grammar and the administration collections: handlers get a parsed request. */
export type Resource = 'root' | 'index' | 'document' | 'templates' | 'template' | 'aliases' | 'alias' | 'keys' | 'key';
/** Endpoints outside the grammar: answered from the raw request, without query parsing (a probe's `?x` never fails it). */
export type Endpoint = 'metrics' | 'healthz' | 'readyz' | 'openapi' | 'snapshots' | 'dashboard' | 'dashboard_file';

/** Query parameters of API.md §2.1 and §9.1, described once in components/parameters. */
export type QueryParam = 'commit' | 'volatile' | 'echo' | 'comments' | 'human' | 'pretty' | 'version' | 'upsert' | 'selector'
  | 'q' | 'query' | 'sort' | 'offset' | 'limit' | 'check_at_least' | 'metric';

/** A schema of components/schemas (api/openapi.ts). */
export type SchemaName = 'Error' | 'Document' | 'DocumentBody' | 'JsonPatch' | 'DocumentInfo' | 'IndexDefinition'
  | 'IndexDescription' | 'IndexInfo' | 'SearchRequest' | 'SearchResponse' | 'CountResponse' | 'DumpItem' | 'RestoreReport'
  | 'ServerInfo' | 'Node' | 'Template' | 'Alias' | 'KeyDefinition' | 'Key' | 'CreatedKey' | 'Health' | 'Readiness' | 'Any';

/** How a route reads its body: a structured value of that schema (JSON, YAML, MessagePack…), NDJSON too, or any bytes. */
export interface BodyDoc {
  schema: SchemaName;
  required: boolean;
  /** RESTORE also reads NDJSON; document writes also store any other type as content (API.md §6). */
  also?: 'ndjson' | 'content';
}

export interface ResponseDoc {
  description: string;
  schema?: SchemaName;
  /** The answer is a list of that schema (API.md §3.1 index lists answer a map of them: `map`). */
  shape?: 'array' | 'map';
  /** Not a serialised value (metrics text, stored content): the media type. */
  mediaType?: string;
  headers?: readonly ('Location' | 'Allow')[];
}

/** An operation's description in the OpenAPI document. */
export interface OperationDoc {
  summary: string;
  description?: string;
  query?: readonly QueryParam[];
  body?: BodyDoc;
  responses: Readonly<Record<number, ResponseDoc>>;
  /** Error statuses besides those every operation may answer (400, 401, 403, 405, 406, 5xx). */
  errors?: readonly number[];
}

export interface Route<H> {
  method: string;
  /** The operation label of metrics and logs, and the OpenAPI operationId (`document.get`). */
  operation: string;
  handle: H;
  doc: OperationDoc;
  /**
   * A write a coordinator that is not elected runs itself (a document's):
   * the elected one only runs its routed call (cluster/leader-link.ts).
   * Other writes are forwarded to the elected coordinator.
   */
  anyCoordinator?: true;
}

export type Handler = (services: ApiServices, ctx: RequestContext) => Reply | Promise<Reply>;
export type EndpointHandler = (services: ApiServices, req: HttpRequest) => Promise<HttpResponse>;

export interface ResourceDef<K extends string, H> {
  kind: K;
  /** The OpenAPI path template; the first named parameter is the resource's own. */
  path: string;
  /** The same resource also served at (documented as a description line). */
  alsoAt?: readonly string[];
  /** `a document`, `the key list`: in a 405's message. */
  what: string;
  /** Metric label prefix when it differs from `kind` (a template and the template list both count as `templates`). */
  label?: string;
  /** Whether OPTIONS answers with the `Allow` header (every grammar resource; not the probes). */
  options: boolean;
  routes: readonly Omit<Route<H>, 'operation'>[];
  /** Views of a GET reached through a selector (`/.nodes` = `GET /` drilled to `nodes`), documented as their own paths. */
  views?: readonly { path: string; summary: string; response: ResponseDoc }[];
}

const READ: readonly QueryParam[] = ['selector', 'pretty', 'comments', 'human', 'volatile'];
const WRITE: readonly QueryParam[] = ['commit', 'echo', 'comments', 'human', 'pretty', 'version'];
const SEARCH: readonly QueryParam[] = ['q', 'query', 'sort', 'metric', 'offset', 'limit', 'check_at_least', 'selector', 'pretty', 'comments', 'human', 'volatile'];
const ADMIN_READ: readonly QueryParam[] = ['selector', 'pretty'];

const OK_EMPTY: ResponseDoc = { description: 'Exists (no body).' };
const DELETED: ResponseDoc = { description: 'Deleted (no body).' };
const NO_ECHO: ResponseDoc = { description: 'Written, with `echo=false` (no body).' };

/** Methods that write: on a document path they never take a drill selector (checked by the dispatcher before the route, so POST answers 400, not 405). */
export const WRITE_METHODS: ReadonlySet<string> = new Set(['PUT', 'POST', 'RESTORE', 'UPDATE', 'UPSERT', 'PATCH', 'DELETE']);

/** A document write never takes a drill selector (API.md §1.3): `gir1.2-cvc` must not overwrite `gir1`. */
export function refuseDottedId(ctx: RequestContext): void {
  const { id, selector } = ctx.path;
  if (id !== undefined && selector !== undefined && extensionType(selector) === undefined) throw apiErrors.dotInWrittenId(id, selector);
}


/** `/.templates/` and `/.aliases/`: the list and its entries (admin/handlers.ts), described alike. */
function adminCollection(list: 'templates' | 'aliases', item: 'template' | 'alias',
  text: { param: string; schema: SchemaName; section: string; noun: string; putErrors: readonly number[] }): ResourceDef<Resource, Handler>[] {
  const { schema, section, noun } = text;
  const article = /^[aeiou]/.test(noun) ? 'an' : 'a';
  return [
    {
      kind: list, path: `/.${list}/`, what: `the ${item} list`, options: true,
      routes: [
        { method: 'GET', handle: (s, ctx) => s.admin.list(ctx, list),
          doc: { summary: `Every ${noun}, by name (API.md ${section})`, query: ADMIN_READ, responses: { 200: { description: `The ${list}.`, schema, shape: 'map' } } } },
        { method: 'HEAD', handle: (s, ctx) => s.admin.list(ctx, list), doc: { summary: `The ${item} list`, responses: { 200: OK_EMPTY } } },
      ],
    },
    {
      kind: item, path: `/.${list}/{${text.param}}`, what: `${article} ${item}`, label: list, options: true,
      routes: [
        { method: 'GET', handle: (s, ctx) => s.admin.get(ctx, list),
          doc: { summary: `${article === 'an' ? 'An' : 'A'} ${noun} (API.md ${section})`, query: ADMIN_READ,
            responses: { 200: { description: `The ${item}.`, schema } }, errors: [404] } },
        { method: 'HEAD', handle: (s, ctx) => s.admin.get(ctx, list), doc: { summary: `Whether the ${item} exists`, responses: { 200: OK_EMPTY }, errors: [404] } },
        { method: 'PUT', handle: (s, ctx) => s.admin.put(ctx, list),
          doc: { summary: `Create or atomically replace ${article} ${noun} (API.md ${section})`, query: ['echo', 'pretty'], body: { schema, required: true },
            responses: { 200: { description: `The ${item} as stored.`, schema }, 204: NO_ECHO }, errors: text.putErrors } },
        { method: 'DELETE', handle: (s, ctx) => s.admin.delete(ctx, list), doc: { summary: `Delete ${article} ${noun}`, responses: { 204: DELETED }, errors: [404] } },
      ],
    },
  ];
}

const RESOURCES: readonly ResourceDef<Resource, Handler>[] = [
  {
    kind: 'root', path: '/', what: 'the root', options: true,
    routes: [
      { method: 'GET', handle: (s, ctx) => s.root(ctx).then((value) => ({ status: 200, value })),
        doc: { summary: 'Server and cluster information (API.md §12.1)',
          description: 'A selector drills it: `GET /.state`, `GET /.nodes`. A browser (an `Accept` that ranks `text/html` above JSON, YAML and MessagePack) '
            + 'gets the dashboard page instead, as `GET /.dashboard/` answers it.',
          query: ['selector', 'pretty'], responses: { 200: { description: 'The server.', schema: 'ServerInfo' } } } },
      { method: 'HEAD', handle: () => ({ status: 200 }), doc: { summary: 'The server answers', responses: { 200: OK_EMPTY } } },
    ],
    views: [{ path: '/.nodes', summary: 'The nodes of the cluster and their shard copies (API.md §12.2): `GET /` drilled to `nodes`',
      response: { description: 'Every node; inactive ones carry only `name` and `active`.', schema: 'Node', shape: 'array' } }],
  },
  {
    kind: 'index', path: '/{index}/', what: 'an index', options: true,
    routes: [
      { method: 'GET', handle: (s, ctx) => s.indexes.get(ctx),
        doc: { summary: 'Settings and schema of an index (API.md §7.2)', query: READ,
          responses: { 200: { description: 'The index; for a list `/a,b/`, a map of index path to this object.', schema: 'IndexDescription' } }, errors: [404] } },
      { method: 'HEAD', handle: (s, ctx) => s.indexes.get(ctx),
        doc: { summary: 'Whether the index (every index of a list) exists', responses: { 200: OK_EMPTY }, errors: [404] } },
      { method: 'PUT', handle: (s, ctx) => s.indexes.put(ctx),
        doc: { summary: 'Create an index or merge its schema (API.md §7.1)', query: WRITE, body: { schema: 'IndexDefinition', required: false },
          responses: { 200: { description: 'The index as GET shows it.', schema: 'IndexDescription' }, 204: NO_ECHO }, errors: [409, 412, 415] } },
      { method: 'POST', anyCoordinator: true, handle: (s, ctx) => s.documents.index(ctx, true),
        doc: { summary: 'Index a document under a new ID (API.md §5.1)', query: WRITE, body: { schema: 'DocumentBody', required: true },
          responses: {
            200: { description: 'The document as stored, with its generated `_id`.', schema: 'Document', headers: ['Location'] },
            201: { description: 'Created, with `echo=false`.', headers: ['Location'] },
          }, errors: [409, 412, 413] } },
      { method: 'UPDATE', handle: (s, ctx) => s.indexes.put(ctx),
        doc: { summary: 'As PUT on the index (API.md §7.1)', query: WRITE, body: { schema: 'IndexDefinition', required: false },
          responses: { 200: { description: 'The index as GET shows it.', schema: 'IndexDescription' }, 204: NO_ECHO }, errors: [409, 412, 415] } },
      { method: 'UPSERT', handle: (s, ctx) => s.indexes.put(ctx),
        doc: { summary: 'As PUT on the index (API.md §7.1)', query: WRITE, body: { schema: 'IndexDefinition', required: false },
          responses: { 200: { description: 'The index as GET shows it.', schema: 'IndexDescription' }, 204: NO_ECHO }, errors: [409, 412, 415] } },
      { method: 'DELETE', handle: (s, ctx) => s.indexes.delete(ctx),
        doc: { summary: 'Delete the index, its documents and content (API.md §7.3)', responses: { 204: DELETED }, errors: [404] } },
      { method: 'INFO', handle: (s, ctx) => s.indexes.info(ctx),
        doc: { summary: 'Statistics of the index (API.md §7.4)', query: ['pretty', 'human'],
          responses: { 200: { description: 'The statistics.', schema: 'IndexInfo' } }, errors: [404] } },
      { method: 'SEARCH', handle: (s, ctx) => s.searches.search(ctx, false),
        doc: { summary: 'Search (API.md §9, §10)', description: 'Indexes may be a list; an item ending in `*` expands to the indexes with that prefix. '
            + 'Without a body the query parameters say what to search. A missing index gives an empty result.',
          query: SEARCH, body: { schema: 'SearchRequest', required: false },
          responses: { 200: { description: 'The hits and aggregations.', schema: 'SearchResponse' } }, errors: [415] } },
      { method: 'COUNT', handle: (s, ctx) => s.searches.search(ctx, true),
        doc: { summary: 'Count the matches of a search (API.md §9.1)', query: SEARCH, body: { schema: 'SearchRequest', required: false },
          responses: { 200: { description: 'The number of matches.', schema: 'CountResponse' } }, errors: [415] } },
      { method: 'COMMIT', handle: (s, ctx) => s.indexes.commit(ctx),
        doc: { summary: 'Make every shard of the index durable (API.md §7.5)', responses: { 200: { description: 'Durable (empty body).' } }, errors: [404] } },
      { method: 'DUMP', handle: (s, ctx) => s.dumps.dump(ctx),
        doc: { summary: 'Every document as stored, content included (API.md §7.6)',
          description: 'A JSON array, NDJSON (`Accept: application/x-ndjson`) or a MessagePack sequence, streamed.',
          responses: { 200: { description: 'The documents.', schema: 'DumpItem', shape: 'array' } }, errors: [404] } },
      { method: 'RESTORE', handle: (s, ctx) => s.restores.restore(ctx),
        doc: { summary: 'Index many documents from a stream (API.md §7.7)', query: ['commit', 'pretty', 'human'],
          body: { schema: 'DumpItem', required: true, also: 'ndjson' },
          responses: { 200: { description: 'One answer per item, in order.', schema: 'RestoreReport' } }, errors: [413, 415] } },
    ],
  },
  {
    kind: 'document', path: '/{index}/{id}', what: 'a document', options: true,
    routes: [
      { method: 'GET', handle: (s, ctx) => s.documents.get(ctx),
        doc: { summary: 'A document, or its stored content (API.md §5.2, §6)',
          description: 'A known file extension (`/img/Lenna.png`) or `Accept` selects stored content, answered byte-exact with its own type.',
          query: READ, responses: { 200: { description: 'The document as stored, or stored content.', schema: 'Document' } }, errors: [404] } },
      { method: 'HEAD', handle: (s, ctx) => s.documents.get(ctx),
        doc: { summary: 'Whether the document exists', responses: { 200: OK_EMPTY }, errors: [404] } },
      { method: 'PUT', anyCoordinator: true, handle: (s, ctx) => (isContentBody(ctx.req.headers['content-type']) ? s.documents.storeContent(ctx, 'index') : s.documents.index(ctx, false)),
        doc: { summary: 'Index (replace) a document, or store content as the whole document (API.md §5.1, §6)', query: WRITE,
          body: { schema: 'DocumentBody', required: true, also: 'content' },
          responses: { 200: { description: 'The document as stored.', schema: 'Document' }, 204: NO_ECHO }, errors: [409, 412, 413] } },
      { method: 'UPDATE', anyCoordinator: true, handle: (s, ctx) => (isContentBody(ctx.req.headers['content-type']) ? s.documents.storeContent(ctx, 'update') : s.documents.update(ctx, 'update')),
        doc: { summary: 'Merge into a document, or store/unlink content (API.md §5.3, §6)', query: [...WRITE, 'upsert'],
          body: { schema: 'DocumentBody', required: true, also: 'content' },
          responses: { 200: { description: 'The merged document.', schema: 'Document' }, 204: NO_ECHO }, errors: [404, 409, 412, 413] } },
      { method: 'UPSERT', anyCoordinator: true, handle: (s, ctx) => (isContentBody(ctx.req.headers['content-type']) ? s.documents.storeContent(ctx, 'update') : s.documents.update(ctx, 'update')),
        doc: { summary: 'UPDATE that creates a missing document (API.md §5.3)', query: WRITE,
          body: { schema: 'DocumentBody', required: true, also: 'content' },
          responses: { 200: { description: 'The merged document.', schema: 'Document' }, 204: NO_ECHO }, errors: [409, 412, 413] } },
      { method: 'PATCH', anyCoordinator: true, handle: (s, ctx) => s.documents.update(ctx, 'patch'),
        doc: { summary: 'Apply a JSON Patch (RFC 6902, with incr/decr) (API.md §5.4)', query: [...WRITE, 'upsert'],
          body: { schema: 'JsonPatch', required: true },
          responses: { 200: { description: 'The patched document.', schema: 'Document' }, 204: NO_ECHO }, errors: [404, 409, 415] } },
      { method: 'DELETE', anyCoordinator: true, handle: (s, ctx) => s.documents.delete(ctx),
        doc: { summary: 'Delete a document (API.md §5.5)', query: ['commit', 'version'], responses: { 204: DELETED }, errors: [404, 409] } },
      { method: 'INFO', handle: (s, ctx) => s.documents.info(ctx),
        doc: { summary: 'Terms, values and stored entries of a document (API.md §5.8)', query: ['pretty', 'human'],
          responses: { 200: { description: 'What the index holds of the document.', schema: 'DocumentInfo' } }, errors: [404] } },
      { method: 'DUMP', handle: (s, ctx) => s.dumps.dumpOne(ctx),
        doc: { summary: 'One document as DUMP writes it (API.md §3.1)', responses: { 200: { description: 'The document.', schema: 'DumpItem' } }, errors: [404] } },
      { method: 'RESTORE', handle: (s, ctx) => s.documents.index(ctx, false),
        doc: { summary: 'As PUT (API.md §3.1)', query: WRITE, body: { schema: 'DocumentBody', required: true },
          responses: { 200: { description: 'The document as stored.', schema: 'Document' }, 204: NO_ECHO }, errors: [409, 412, 413] } },
    ],
  },
  ...adminCollection('templates', 'template', { param: 'name', schema: 'Template', section: '§16.1', noun: 'index template', putErrors: [415] }),
  ...adminCollection('aliases', 'alias', { param: 'alias', schema: 'Alias', section: '§16.2', noun: 'alias', putErrors: [409, 415] }),
  {
    kind: 'keys', path: '/.keys/', what: 'the key list', options: true,
    routes: [
      { method: 'GET', handle: (s, ctx) => s.keys.list(ctx),
        doc: { summary: 'Every API key: names, scopes, expiry, never secrets (API.md §16.3; master key only)', query: ['pretty'],
          responses: { 200: { description: 'The keys.', schema: 'Key', shape: 'array' } } } },
      { method: 'HEAD', handle: (s, ctx) => s.keys.list(ctx), doc: { summary: 'The key list', responses: { 200: OK_EMPTY } } },
      { method: 'POST', handle: (s, ctx) => s.keys.create(ctx),
        doc: { summary: 'Create a scoped API key; its secret is answered once (API.md §16.3)', query: ['pretty'], body: { schema: 'KeyDefinition', required: true },
          responses: { 201: { description: 'The key with its secret `_key`.', schema: 'CreatedKey', headers: ['Location'] } }, errors: [409, 415] } },
    ],
  },
  {
    kind: 'key', path: '/.keys/{name}', what: 'a key', label: 'keys', options: true,
    routes: [
      { method: 'GET', handle: (s, ctx) => s.keys.get(ctx),
        doc: { summary: 'An API key (never its secret)', query: ['pretty'], responses: { 200: { description: 'The key.', schema: 'Key' } }, errors: [404] } },
      { method: 'HEAD', handle: (s, ctx) => s.keys.get(ctx), doc: { summary: 'Whether the key exists', responses: { 200: OK_EMPTY }, errors: [404] } },
      { method: 'DELETE', handle: (s, ctx) => s.keys.delete(ctx),
        doc: { summary: 'Revoke an API key, at once on every coordinator', responses: { 204: DELETED }, errors: [404] } },
    ],
  },
];

const JSON_TYPE = { 'Content-Type': 'application/json; charset=utf-8' };

/** An endpoint's GET and HEAD: one handler (the HTTP layer sends no body for HEAD), one description. */
function getAndHead(handle: EndpointHandler, doc: OperationDoc): Omit<Route<EndpointHandler>, 'operation'>[] {
  return ['GET', 'HEAD'].map((method) => ({ method, handle, doc }));
}

const ENDPOINTS: readonly ResourceDef<Endpoint, EndpointHandler>[] = [
  {
    kind: 'metrics', path: '/:metrics', alsoAt: ['/metrics'], what: 'the metrics endpoint', options: false,
    routes: getAndHead(
      (s) => s.metricsText().then(({ contentType, body }) => ({ status: 200, headers: { 'Content-Type': contentType }, body })),
      { summary: 'Prometheus metrics (API.md §12.3)', responses: { 200: { description: 'Prometheus text exposition.', mediaType: 'text/plain; version=0.0.4' } } },
    ),
  },
  {
    kind: 'healthz', path: '/healthz', what: 'a health endpoint', options: false,
    routes: getAndHead(
      () => Promise.resolve({ status: 200, headers: JSON_TYPE, body: '{"status":"ok"}' }),
      { summary: 'Liveness: the process serves HTTP (no API key needed)', responses: { 200: { description: 'Alive.', schema: 'Health' } } },
    ),
  },
  {
    kind: 'readyz', path: '/readyz', what: 'a health endpoint', options: false,
    routes: getAndHead(
      (s) => s.readiness().then((state) => ({
        status: state.ready ? 200 : 503,
        headers: JSON_TYPE,
        body: JSON.stringify(state.ready ? { status: 'ready' } : { status: 'not ready', reason: state.reason }),
      })),
      { summary: 'Readiness: nodes reached, shard copies open, an elected coordinator (no API key needed)',
        responses: { 200: { description: 'Ready.', schema: 'Readiness' }, 503: { description: 'Not ready, and why.', schema: 'Readiness' } } },
    ),
  },
  {
    kind: 'openapi', path: '/.openapi', what: 'the OpenAPI document', options: false,
    routes: getAndHead(
      // Negotiated like every answer: JSON by default, YAML for `Accept: application/yaml`.
      (s, req) => Promise.resolve(render(req, { status: 200, value: s.openapi() }, undefined)),
      { summary: 'This OpenAPI 3.1 document (API.md §16.4)', description: 'JSON, or YAML with `Accept: application/yaml`.',
        responses: { 200: { description: 'The document.', schema: 'Any' } } },
    ),
  },
  {
    kind: 'snapshots', path: '/.snapshots/', alsoAt: ['/.snapshots'], what: 'the snapshot endpoint', options: false,
    routes: [{
      method: 'POST',
      handle: async (s, req) => render(req, await s.snapshots.take(), undefined),
      doc: {
        summary: 'Take a snapshot: every shard at one point in time, with the cluster state (docs/snapshots.md; `admin`)',
        description: 'What `tessera snapshot --out DIR` reads: a MessagePack sequence (a header with the cluster state and the shards, '
          + 'each shard\'s documents a page per frame, a frame closing each shard, then `{"end": true}`).',
        responses: { 200: { description: 'The snapshot stream.', mediaType: 'application/vnd.tessera.snapshot' } },
        errors: [409, 410, 503],
      },
    }],
  },
];

/** Where the dashboard's files are (API.md §16.4): `/.dashboard/` is its page, `/.dashboard/<file>` the rest. */
export const DASHBOARD_PREFIX = '/.dashboard/';

/** The page and files of the dashboard: no API key needed (auth/actions.ts), as they hold no data; the page's own calls carry the key. */
const DASHBOARD_ENDPOINTS: readonly ResourceDef<Endpoint, EndpointHandler>[] = [
  {
    kind: 'dashboard', path: DASHBOARD_PREFIX, alsoAt: ['/.dashboard'], what: 'the dashboard', options: false,
    routes: getAndHead(
      (s, req) => Promise.resolve(s.dashboard?.page(req) ?? throwing(apiErrors.dashboardNotBuilt())),
      { summary: 'The web dashboard (API.md §16.4; no API key needed)',
        description: 'An HTML page: indexes, search, documents, nodes and metrics of this server. It asks for the API key itself '
          + 'when the server has one, and sends it on its calls. `GET /` from a browser answers the same page. '
          + 'Revalidated on each load (`ETag`, `Cache-Control: no-cache`).',
        responses: { 200: { description: 'The page.', mediaType: 'text/html' }, 304: { description: 'Unchanged since the `If-None-Match` ETag.' } }, errors: [404] },
    ),
  },
  {
    kind: 'dashboard_file', path: `${DASHBOARD_PREFIX}{file}`, what: 'a dashboard file', options: false,
    routes: getAndHead(
      (s, req) => {
        const name = req.path.slice(DASHBOARD_PREFIX.length);
        return Promise.resolve(s.dashboard === undefined ? throwing(apiErrors.dashboardNotBuilt())
          : s.dashboard.file(req, name) ?? throwing(apiErrors.dashboardFileNotFound(name)));
      },
      { summary: 'A script, style sheet or image of the dashboard (no API key needed)',
        description: 'Named by its content: cached for a year (`Cache-Control: immutable`).',
        responses: { 200: { description: 'The file, in its own type.', mediaType: 'application/octet-stream' }, 304: { description: 'Unchanged since the `If-None-Match` ETag.' } },
        errors: [404] },
    ),
  },
];

function throwing(err: Error): never {
  throw err;
}

/**
 * The endpoint a request names: an exact path of the table, else a
 * dashboard file (`/.dashboard/<file>`); undefined for the path grammar.
 * The dashboard serves reads only: any other method there is an attempt at
 * an index of a reserved name, refused by the grammar as such (API.md §16: 400).
 */
export function endpointOf(method: string, path: string): Endpoint | undefined {
  const endpoint = ENDPOINT_PATHS.get(path) ?? (path.startsWith(DASHBOARD_PREFIX) ? 'dashboard_file' : undefined);
  if ((endpoint === 'dashboard' || endpoint === 'dashboard_file') && method !== 'GET' && method !== 'HEAD') return undefined;
  return endpoint;
}

/** The order methods are listed in an `Allow` header (API.md §3.1). */
const METHOD_ORDER = ['GET', 'HEAD', 'PUT', 'POST', 'UPDATE', 'UPSERT', 'PATCH', 'DELETE', 'INFO', 'SEARCH', 'COUNT', 'COMMIT', 'DUMP', 'RESTORE', 'OPTIONS'];

function allowHeader(methods: Iterable<string>): string {
  return [...new Set(methods)].sort((a, b) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b)).join(', ');
}

/** A resource's routes with its OPTIONS (answering the `Allow` its other routes make) added when it has one. */
function withOptions(def: ResourceDef<Resource, Handler>): ResourceDef<Resource, Handler> {
  if (!def.options) return def;
  const allow = allowHeader([...def.routes.map((r) => r.method), 'OPTIONS']);
  const options: Omit<Route<Handler>, 'operation'> = {
    method: 'OPTIONS',
    // A fresh headers object per answer: the response's headers are completed in place (request id, CORS).
    handle: () => ({ status: 200, headers: { Allow: allow } }),
    doc: { summary: 'The methods of this resource', responses: { 200: { description: 'No body; `Allow` lists the methods.', headers: ['Allow'] } } },
  };
  return { ...def, routes: [...def.routes, options] };
}

/** The grammar resources and the administration collections, OPTIONS included. */
export const RESOURCE_DEFS: readonly ResourceDef<Resource, Handler>[] = RESOURCES.map(withOptions);
/** The endpoints outside the path grammar. */
export const ENDPOINT_DEFS: readonly ResourceDef<Endpoint, EndpointHandler>[] = [...ENDPOINTS, ...DASHBOARD_ENDPOINTS];

interface Table<K extends string, H> {
  routes: ReadonlyMap<K, ReadonlyMap<string, Route<H>>>;
  allow: ReadonlyMap<K, string>;
  what: ReadonlyMap<K, string>;
}

function tableOf<K extends string, H>(defs: readonly ResourceDef<K, H>[]): Table<K, H> {
  const routes = new Map<K, Map<string, Route<H>>>();
  const allow = new Map<K, string>();
  const what = new Map<K, string>();
  for (const def of defs) {
    const label = def.label ?? def.kind;
    routes.set(def.kind, new Map(def.routes.map((r) => [r.method, { ...r, operation: `${label}.${r.method.toLowerCase()}` }])));
    allow.set(def.kind, allowHeader(def.routes.map((r) => r.method)));
    what.set(def.kind, def.what);
  }
  return { routes, allow, what };
}

const RESOURCE_TABLE = tableOf(RESOURCE_DEFS);
const ENDPOINT_TABLE = tableOf(ENDPOINT_DEFS);

/** The route of `method` on a resource, or undefined (405). */
export function resourceRoute(resource: Resource, method: string): Route<Handler> | undefined {
  return (RESOURCE_TABLE.routes.get(resource) as ReadonlyMap<string, Route<Handler>>).get(method);
}

/** The route of `method` on an endpoint, or undefined (405). */
export function endpointRoute(endpoint: Endpoint, method: string): Route<EndpointHandler> | undefined {
  return (ENDPOINT_TABLE.routes.get(endpoint) as ReadonlyMap<string, Route<EndpointHandler>>).get(method);
}

/** The 405 of a method the table does not give the resource, with its `Allow`. */
export function methodNotAllowed(kind: Resource | Endpoint, method: string): Error {
  const table = (RESOURCE_TABLE.allow.has(kind as Resource) ? RESOURCE_TABLE : ENDPOINT_TABLE) as Table<string, unknown>;
  return apiErrors.methodNotAllowed(method, table.what.get(kind) as string, table.allow.get(kind) as string);
}

/** The `Allow` header of a resource or endpoint. */
export function allowOf(kind: Resource | Endpoint): string {
  return (RESOURCE_TABLE.allow.get(kind as Resource) ?? ENDPOINT_TABLE.allow.get(kind as Endpoint)) as string;
}

/** Every method the API serves on some resource: what a CORS preflight allows. */
export const ALL_METHODS = allowHeader(RESOURCE_DEFS.flatMap((def) => def.routes.map((r) => r.method)));

/** The endpoints by the raw paths they answer (checked before the path grammar); a dashboard file has its prefix (endpointOf). */
const ENDPOINT_PATHS: ReadonlyMap<string, Endpoint> = new Map(
  ENDPOINT_DEFS.filter((def) => def.kind !== 'dashboard_file')
    .flatMap((def) => [def.path, ...(def.alsoAt ?? [])].map((path) => [path, def.kind] as const)));

/** Every resource and endpoint of the table: its kind, path template, methods and `Allow` (the routing tests walk it). */
export function routeSummary(): { kind: Resource | Endpoint; path: string; methods: string[]; allow: string }[] {
  return [...RESOURCE_DEFS, ...ENDPOINT_DEFS].map((def) => ({
    kind: def.kind, path: def.path, methods: def.routes.map((r) => r.method), allow: allowOf(def.kind),
  }));
}
