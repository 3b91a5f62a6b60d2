/**
 * The coordinator: turns HTTP requests into API operations (API.md §3.1
 * routing table), reaches shard copies only through RPC clients, and renders
 * every result and every failure in the negotiated format.
 */
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { toTesseraError, type TesseraError } from '@tessera/errors';
import { KNOWN_METHODS, type DecodeLimits, type HttpRequest, type HttpResponse } from '@tessera/http';
import type { Logger } from 'pino';
import { DOCUMENT_LIMITS_DEFAULTS, type DocumentLimits } from '@tessera/schema';
import { ClusterInfo, type ClusterIdentity, type HttpEndpoint } from './cluster/info.js';
import type { NodeDirectory } from './cluster/nodes.js';
import { DocumentHandlers } from './documents/handlers.js';
import { apiErrors } from './errors.js';
import { IndexHandlers } from './indexes/handlers.js';
import { IndexRegistry } from './indexes/registry.js';
import { Replicator } from './replication/replicator.js';
import { EMPTY_CLUSTER_STATE, type ClusterState } from './state/cluster-state.js';
import type { IndexSettings } from './indexes/settings.js';
import { foreignDocuments } from './indexes/foreign-documents.js';
import { SchemaPolicy } from './indexes/schema-policy.js';
import { RequestContext } from './request/context.js';
import { CorsPolicy, type CorsOrigins } from './request/cors.js';
import { parsePath, type ParsedPath } from './request/path.js';
import { QueryParams } from './request/params.js';
import { render, renderError, type Reply } from './response/respond.js';
import { applySelector } from './response/selector.js';
import { ShardRouter } from './routing.js';
import { DumpHandler } from './bulk/dump.js';
import { RestoreHandler } from './bulk/restore.js';
import { SearchHandlers } from './search/handlers.js';
import { LocalStateStore } from './state/local-store.js';
import { Metrics } from './observability/metrics.js';
import { Readiness } from './observability/readiness.js';
import type { NodeStatsReply } from '@tessera/rpc';
import { extensionType, isContentBody } from './documents/content.js';
import { AdminHandlers, adminPathOf, type AdminPath } from './admin/handlers.js';
import { resolveAliases, type IndexUse } from './admin/aliases.js';
import { parseTemplate } from './admin/templates.js';
import type { CoordinatorGroup } from './cluster/coordinator-group.js';
import { Forwarder, servedLocally } from './cluster/forward.js';
import type { StateStore } from './state/store.js';
import { isKeysPath } from './auth/actions.js';
import { Authorizer } from './auth/authorizer.js';
import { KEYS_ALLOW, KeyHandlers } from './auth/key-handlers.js';

/** A forwarded request's longest wait for the elected coordinator's answer (head, and between body chunks). */
const FORWARD_TIMEOUT_MS = 300_000;

export interface CoordinatorOptions {
  identity: ClusterIdentity;
  /** File holding the cluster state, when no `state` store is given. */
  stateFile: string;
  /** The cluster-state store shared with other coordinators (etcd), instead of `stateFile`. */
  state?: StateStore<ClusterState>;
  /** The coordinators sharing `state`: only the elected one decides and writes; the others forward (cluster/forward.ts). */
  group?: CoordinatorGroup;
  nodes: NodeDirectory;
  indexDefaults: IndexSettings;
  /** `--strict` (API.md §8.8): new fields need `_type`, new indexes `_settings` (412). */
  strict?: boolean;
  /** A node lost this long has its shard copies re-allocated (REPLICATION_DEFAULTS.nodeLeftDelayMs when absent). */
  nodeLeftDelayMs?: number;
  decodeLimits: DecodeLimits;
  /** What one document may cost (API.md §13); DOCUMENT_LIMITS_DEFAULTS when absent. */
  documentLimits?: DocumentLimits;
  log: Logger;
  /** Requests slower than this are logged at warn. */
  slowRequestMs: number;
  /** RESTORE: items per batch sent to the shards, and the largest item in bytes. */
  restoreBatchItems: number;
  restoreItemBytesMax: number;
  /** Index templates of the configuration file by name (API.md §16.1): stored in the cluster state at start. */
  templates?: Record<string, unknown>;
  /** The master API key (API.md §16.3): with one, every request but the health checks needs a key (auth/authorizer.ts). */
  apiKey?: string;
  /** `--cors-origin` (request/cors.ts): browsers on these origins may call the API; absent: no CORS headers at all. */
  cors?: CorsOrigins;
  /** Certificates (PEM) the elected coordinator's HTTPS certificate is verified against when requests are forwarded to it. */
  forwardCa?: Buffer;
}

const ALLOW = 'GET, HEAD, PUT, POST, UPDATE, UPSERT, PATCH, DELETE, INFO, SEARCH, COUNT, COMMIT, DUMP, RESTORE, OPTIONS';
/** `/.templates/` and `/.aliases/` (admin/handlers.ts). */
const ADMIN_ALLOW = 'GET, HEAD, PUT, DELETE, OPTIONS';

/**
 * The `Allow` header of a 405: the methods `dispatch` serves on each resource
 * (API.md §3.1). test/src/http-faults.test.ts sends every known method to
 * each resource and checks that exactly these escape the 405.
 */
const ALLOW_BY_RESOURCE: Record<Resource, string> = {
  root: 'GET, HEAD, OPTIONS',
  index: 'GET, HEAD, PUT, POST, UPDATE, UPSERT, DELETE, INFO, SEARCH, COUNT, COMMIT, DUMP, RESTORE, OPTIONS',
  document: 'GET, HEAD, PUT, UPDATE, UPSERT, PATCH, DELETE, INFO, DUMP, RESTORE, OPTIONS',
  templates: ADMIN_ALLOW,
  aliases: ADMIN_ALLOW,
  keys: KEYS_ALLOW,
};
/** The metrics and health endpoints. */
const ALLOW_SPECIAL = 'GET, HEAD';

type Resource = 'root' | 'index' | 'document' | 'templates' | 'aliases' | 'keys';

/** What the response of a routed request needs to know of it: its operation (metrics, logs) and `?pretty`. */
interface Routed {
  operation?: string;
  pretty?: boolean;
}

/** Method label of the request metrics: known methods, else OTHER (client input must not grow label sets). */
const METHOD_LABELS = new Set(KNOWN_METHODS);

/** Paths served outside the index/document grammar (checked first, without an await for the others). */
const SPECIAL_PATHS = new Set(['/:metrics', '/metrics', '/healthz', '/readyz']);

/** A client's X-Request-Id is echoed when it is a sane token; else one is generated. */
const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** A node's figures for a metrics scrape: a slow node is left out of that scrape rather than holding it. */
const NODE_STATS_TIMEOUT_MS = 2_000;

export class Coordinator {
  private constructor(
    readonly metrics: Metrics,
    private readonly readiness: Readiness,
    private readonly options: CoordinatorOptions,
    private readonly registry: IndexRegistry,
    private readonly documents: DocumentHandlers,
    private readonly indexes: IndexHandlers,
    private readonly cluster: ClusterInfo,
    private readonly bulk: RestoreHandler,
    private readonly searches: SearchHandlers,
    private readonly dumps: DumpHandler,
    private readonly admin: AdminHandlers,
    private readonly forwarder: Forwarder | undefined,
    private readonly authorizer: Authorizer | undefined,
    private readonly keys: KeyHandlers,
  ) {
    this.cors = options.cors === undefined ? undefined : new CorsPolicy(options.cors, ALLOW);
  }

  private readonly cors: CorsPolicy | undefined;

  static async create(options: CoordinatorOptions): Promise<Coordinator> {
    const store = options.state ?? await LocalStateStore.open<ClusterState>(options.stateFile, EMPTY_CLUSTER_STATE);
    const group = options.group;
    const decides = (): boolean => group === undefined || group.isLeader;
    const metrics = new Metrics();
    const registry = new IndexRegistry(store, options.nodes, options.indexDefaults, (client) => metrics.timeRpc(client));
    // Writes through primaries, relays to replicas, recoveries and failover, over the registry's cluster state.
    const replication = new Replicator(registry, options.nodes,
      { log: options.log, decides, ...(options.nodeLeftDelayMs === undefined ? {} : { nodeLeftDelayMs: options.nodeLeftDelayMs }) });
    registry.onIndexDropped((uuid) => replication.forgetIndex(uuid));
    metrics.attachReplication(() => replication.lag());
    const readiness = new Readiness(options.nodes, {
      copiesOn: (node) => registry.list().flatMap((meta) =>
        meta.allocation.flatMap((copies, i) => (copies.includes(node) ? [{ index: meta.path, shard: i + 1 }] : []))),
      open: (node, copy) => registry.client(copy.index, node, copy.shard).call('shard.open', copy),
      flushFailure: async () => flushFailureOf(await askNodeStats(options.nodes)),
      ...(group === undefined ? {} : { blocker: () => groupProblem(group) }),
    }, options.log);
    if (decides()) await loadTemplates(registry, options.templates);
    followMembership(options.nodes, registry, options.log, decides);
    group?.on('elected', () => {
      // What a restarted coordinator does: the nodes here are recorded, the others get the rejoin timeout.
      for (const name of options.nodes.activeNames()) recordJoin(registry, name, options.log);
      replication.takeOver();
      loadTemplates(registry, options.templates).catch((err: unknown) => options.log.error({ err }, 'could not store the configured templates'));
    });
    const router = new ShardRouter();
    const documents = new DocumentHandlers(registry, replication, router, options.documentLimits ?? DOCUMENT_LIMITS_DEFAULTS);
    registry.useSchemaPolicy(new SchemaPolicy({
      strict: options.strict ?? false, documents: foreignDocuments(registry, documents, router), log: options.log,
    }));
    readiness.start();
    return new Coordinator(
      metrics,
      readiness,
      options,
      registry,
      documents,
      new IndexHandlers(registry),
      new ClusterInfo(options.identity, options.nodes, registry, replication, options.indexDefaults, group),
      new RestoreHandler(documents, {
        batchItems: options.restoreBatchItems,
        itemBytesMax: options.restoreItemBytesMax,
        decodeLimits: options.decodeLimits,
      }),
      new SearchHandlers(registry, replication),
      new DumpHandler(registry, router),
      new AdminHandlers(registry),
      group === undefined ? undefined
        : new Forwarder(group.name, { timeoutMs: FORWARD_TIMEOUT_MS, ...(options.forwardCa === undefined ? {} : { ca: options.forwardCa }) }),
      options.apiKey === undefined ? undefined
        : new Authorizer(options.apiKey, () => registry.snapshot().keys, (reason) => metrics.countAuthFailure(reason)),
      new KeyHandlers(registry, options.apiKey !== undefined),
    );
  }

  /** Where the HTTP API listens, once it does (shown in `/.nodes`). */
  advertise(endpoint: HttpEndpoint): void {
    this.cluster.advertise(endpoint);
  }

  /**
   * The HTTP handler. Never throws: every failure becomes an error response.
   * Answers synchronously when the whole request can be (a cached document's
   * GET in the embedded server): no promise between the parser and the
   * socket write, which the HTTP server then sends in the same turn.
   */
  readonly handle = (req: HttpRequest): Promise<HttpResponse> | HttpResponse => {
    const given = req.headers['x-request-id'];
    const requestId = given !== undefined && REQUEST_ID.test(given) ? given : nextRequestId();
    // Before anything else (an API key included): a browser's preflight carries no credentials.
    if (this.cors !== undefined && CorsPolicy.isPreflight(req)) return this.corsPreflight(req, this.cors, requestId);
    // Before anything else, on the coordinator the client reached (a forwarded request keeps its Authorization header).
    const refused = this.authorizer?.check(req);
    if (refused !== undefined) return this.fail(req, refused, requestId, undefined, undefined);
    if (SPECIAL_PATHS.has(req.path)) {
      return this.special(req).then(
        (response) => this.finish(req, response, requestId, undefined),
        (err: unknown) => this.fail(req, err, requestId, undefined, undefined),
      );
    }
    const group = this.options.group;
    if (group !== undefined && !group.isLeader && !servedLocally(req.method)) return this.forwardToLeader(req, group, requestId);
    const seen: Routed = {};
    let reply: Reply | Promise<Reply>;
    try {
      reply = group !== undefined && !group.isLeader ? this.servedFollowing(req, seen) : this.route(req, seen);
    } catch (err) {
      return this.fail(req, err, requestId, seen.pretty, seen.operation);
    }
    if (typeof (reply as Partial<Promise<Reply>>).then !== 'function') {
      return this.rendered(req, reply as Reply, requestId, seen.pretty, seen.operation);
    }
    return (reply as Promise<Reply>).then(
      (settled) => this.rendered(req, settled, requestId, seen.pretty, seen.operation),
      (err: unknown) => this.fail(req, err, requestId, seen.pretty, seen.operation),
    );
  };

  /** Dispatch a request here; `seen` learns its operation and `?pretty` as soon as they are known (for an error too). */
  private route(req: HttpRequest, seen: Routed): Reply | Promise<Reply> {
    if (isKeysPath(req.path)) {
      seen.operation = operationName('keys', req.method);
      const ctx = new RequestContext(req, { indexes: [], id: undefined, selector: undefined }, this.options.decodeLimits);
      seen.pretty = ctx.options.pretty;
      return this.keys.handle(ctx, req.path);
    }
    const admin = adminPathOf(req.path);
    if (admin !== undefined) {
      seen.operation = operationName(admin.collection, req.method);
      return this.administer(req, admin, (ctx) => { seen.pretty = ctx.options.pretty; });
    }
    const parsed = parsePath(req.path, { allowWildcards: req.method === 'SEARCH' || req.method === 'COUNT' });
    const resource = resourceOf(parsed);
    // Aliases resolve here, once, from one cluster state: the handler sees indexes only (admin/aliases.ts).
    const path = resolveAliases(parsed, indexUse(resource, req.method), this.registry.aliases());
    const ctx = new RequestContext(req, path, this.options.decodeLimits);
    seen.pretty = ctx.options.pretty;
    seen.operation = operationName(resource, req.method);
    return this.dispatch(ctx, resource);
  }

  /**
   * A read on a coordinator that is not elected. Its cluster state is etcd's
   * as the watch brought it, a moment behind the elected coordinator's: an
   * index, alias or field created there and acknowledged may not be here
   * yet. So the state is read from etcd first (one read shared by the
   * requests that arrive meanwhile): a read through any coordinator sees
   * every change acknowledged before it, as one through the elected one
   * does. With etcd out of reach (a call failed, or the watch is down), the
   * read is served from the state as it is, without waiting for a call to
   * time out (this coordinator then says it is not ready).
   */
  private async servedFollowing(req: HttpRequest, seen: Routed): Promise<Reply> {
    const state = this.options.state;
    if (state?.health().connected === true) await state.refresh().catch(() => false);
    return this.route(req, seen);
  }

  /** A request only the elected coordinator runs, sent to it; its answer as it gave it. */
  private async forwardToLeader(req: HttpRequest, group: CoordinatorGroup, requestId: string): Promise<HttpResponse> {
    try {
      const leader = group.leader();
      if (leader?.http === undefined) throw apiErrors.leaderUnavailable(group.health() ?? 'no coordinator is elected');
      if (leader.name === group.name) throw apiErrors.leaderUnavailable(`this coordinator's election is being settled`);
      const response = await (this.forwarder as Forwarder).forward(req, leader.http);
      return this.finish(req, response, requestId, 'forwarded');
    } catch (err) {
      return this.fail(req, err, requestId, undefined, 'forwarded');
    }
  }

  /** A CORS preflight's answer (request/cors.ts), logged and counted as any request. */
  private corsPreflight(req: HttpRequest, cors: CorsPolicy, requestId: string): HttpResponse {
    try {
      return this.finish(req, cors.preflight(req), requestId, 'cors.preflight');
    } catch (err) {
      return this.fail(req, err, requestId, undefined, 'cors.preflight');
    }
  }

  /** Let go of the connections to the elected coordinator (shutdown). */
  async close(): Promise<void> {
    await this.forwarder?.close();
  }

  /** A handler's reply in the negotiated format (a failure to render it is answered as any error). */
  private rendered(req: HttpRequest, reply: Reply, requestId: string, pretty: boolean | undefined, operation: string | undefined): HttpResponse {
    let response: HttpResponse;
    try {
      response = render(req, reply, pretty);
    } catch (err) {
      return this.fail(req, err, requestId, pretty, operation);
    }
    return this.finish(req, response, requestId, operation);
  }

  /** The error response of a failed request; 5xx are logged. */
  private fail(req: HttpRequest, err: unknown, requestId: string, pretty: boolean | undefined, operation: string | undefined): HttpResponse {
    const error = toTesseraError(err);
    if (error.status >= 500) this.options.log.error({ err, requestId, method: req.method, path: req.path }, error.message);
    return this.finish(req, renderError(req, error as TesseraError, pretty ?? prettyOf(req.query)), requestId, operation);
  }

  /** Every response: its request id, the request's metrics and log line. */
  private finish(req: HttpRequest, response: HttpResponse, requestId: string, operation: string | undefined): HttpResponse {
    const headers = response.headers ?? (response.headers = {});
    headers['X-Request-Id'] = requestId;
    this.cors?.decorate(req, response);
    this.observe(req, response.status, requestId, operation);
    return response;
  }

  /** Endpoints outside the index/document grammar: metrics and health. */
  private async special(req: HttpRequest): Promise<HttpResponse> {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      throw apiErrors.methodNotAllowed(req.method, req.path.endsWith('metrics') ? 'the metrics endpoint' : 'a health endpoint', ALLOW_SPECIAL);
    }
    switch (req.path) {
      case '/:metrics':
      case '/metrics': {
        const { contentType, body } = await this.metrics.text();
        return { status: 200, headers: { 'Content-Type': contentType }, body };
      }
      case '/healthz':
        return { status: 200, headers: { 'Content-Type': 'application/json; charset=utf-8' }, body: '{"status":"ok"}' };
      case '/readyz': {
        const state = await this.readiness.check();
        const body = JSON.stringify(state.ready ? { status: 'ready' } : { status: 'not ready', reason: state.reason });
        return { status: state.ready ? 200 : 503, headers: { 'Content-Type': 'application/json; charset=utf-8' }, body };
      }
      default:
        throw new Error(`no special endpoint ${req.path}`);
    }
  }

  /** Metrics and the log line of a request; `operation` counts only for a known method (client input must not grow label sets). */
  private observe(req: HttpRequest, status: number, requestId: string, operation: string | undefined): void {
    const seconds = Number(process.hrtime.bigint() - req.startedAt) / 1e9;
    const known = METHOD_LABELS.has(req.method);
    this.metrics.observeRequest(known ? req.method : 'OTHER', status, seconds, known ? operation : undefined);
    const log = this.options.log;
    const ms = Math.round(seconds * 1e6) / 1e3;
    if (ms >= this.options.slowRequestMs) {
      log.warn({ requestId, method: req.method, path: req.path, status, ms }, 'slow request');
    } else if (log.isLevelEnabled('info')) {
      log.info({ requestId, method: req.method, path: req.path, status, ms }, 'request');
    }
  }

  /** Shutdown began (SIGTERM): `/readyz` answers 503 from now on; requests are still served while they drain. */
  beginShutdown(): void {
    this.readiness.beginShutdown();
  }

  /** Every active node's figures of its open shard copies, for the metrics scrape (nodes that do not answer in time are left out). */
  nodeStats(): Promise<NodeStatsReply[]> {
    return askNodeStats(this.options.nodes);
  }

  /** Live documents per index, for the metrics scrape. */
  async documentsByIndex(): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const meta of this.registry.list()) {
      const stats = await this.registry.shardStats(meta);
      out.set(meta.path, stats.reduce((sum, s) => sum + s.documents, 0));
    }
    return out;
  }

  /** The handler of a request; a reply it has at once is returned as is (a cached GET), else a promise of it. */
  private dispatch(ctx: RequestContext, resource: Resource): Reply | Promise<Reply> {
    const method = ctx.method;
    if (method === 'OPTIONS') return { status: 200, headers: { Allow: ALLOW } };
    if (method === 'OPEN' || method === 'CLOSE') throw apiErrors.notImplemented(method);
    switch (resource) {
      case 'root':
        if (method === 'GET') return this.rootValue(ctx).then((value) => ({ status: 200, value }));
        if (method === 'HEAD') return { status: 200 };
        break;
      case 'index':
        switch (method) {
          case 'GET': case 'HEAD': return this.indexes.get(ctx);
          case 'PUT': case 'UPDATE': case 'UPSERT': return this.indexes.put(ctx);
          case 'POST': return this.documents.index(ctx, true);
          case 'DELETE': return this.indexes.delete(ctx);
          case 'INFO': return this.indexes.info(ctx);
          case 'COMMIT': return this.indexes.commit(ctx);
          case 'RESTORE': return this.bulk.restore(ctx);
          case 'SEARCH': case 'COUNT': return this.searches.search(ctx, method === 'COUNT');
          case 'DUMP': return this.dumps.dump(ctx);
        }
        break;
      case 'document':
        if (WRITES.has(method)) refuseDrillSelector(ctx);
        switch (method) {
          case 'GET': case 'HEAD': return this.documents.get(ctx);
          case 'PUT': return isContentBody(ctx.req.headers['content-type']) ? this.documents.storeContent(ctx, 'index') : this.documents.index(ctx, false);
          case 'RESTORE': return this.documents.index(ctx, false);
          case 'UPDATE': case 'UPSERT':
            return isContentBody(ctx.req.headers['content-type']) ? this.documents.storeContent(ctx, 'update') : this.documents.update(ctx, 'update');
          case 'PATCH': return this.documents.update(ctx, 'patch');
          case 'DELETE': return this.documents.delete(ctx);
          case 'INFO': return this.documents.info(ctx);
          case 'DUMP': return this.dumps.dumpOne(ctx);
        }
        break;
    }
    throw apiErrors.methodNotAllowed(method, resource === 'root' ? 'the root' : resource === 'index' ? 'an index' : 'a document',
      ALLOW_BY_RESOURCE[resource]);
  }

  /** `/.templates/…` and `/.aliases/…` (API.md §16.1, §16.2). */
  private administer(req: HttpRequest, at: AdminPath, seen: (ctx: RequestContext) => void): Reply | Promise<Reply> {
    const ctx = new RequestContext(req, { indexes: [], id: at.name, selector: undefined }, this.options.decodeLimits);
    seen(ctx);
    if (ctx.method === 'OPTIONS') return { status: 200, headers: { Allow: ADMIN_ALLOW } };
    return this.admin.handle(ctx, at);
  }

  private async rootValue(ctx: RequestContext): Promise<unknown> {
    const value = await this.cluster.root();
    const selector = ctx.options.selector ?? ctx.path.selector;
    return selector === undefined ? value : applySelector(value, selector);
  }
}

/**
 * Membership in the cluster state and the log: nodes named in the state are
 * expected (listed inactive until they join); a joining node is remembered
 * and gets the deletions it missed.
 */
function followMembership(nodes: NodeDirectory, registry: IndexRegistry, log: Logger, decides: () => boolean): void {
  nodes.expect(registry.knownNodes());
  if (decides()) for (const name of nodes.activeNames()) recordJoin(registry, name, log);
  nodes.on('nodeJoined', (entry) => {
    log.info({ node: entry.name, host: entry.host, dataDir: entry.dataDir, pid: entry.pid }, 'node joined');
    if (decides()) recordJoin(registry, entry.name, log);
  });
  nodes.on('nodeLost', (entry, reason) => log.warn({ node: entry.name, reason }, 'node lost'));
}

/** A node in the cluster state, and its pending drops done (the elected coordinator's work). */
function recordJoin(registry: IndexRegistry, name: string, log: Logger): void {
  registry.nodeJoined(name).catch((err: unknown) => log.error({ err, node: name }, 'could not record the node in the cluster state'));
}

/** Why a coordinator of several cannot serve: its own lease, or no elected coordinator to forward writes to. */
function groupProblem(group: CoordinatorGroup): string | undefined {
  const own = group.health();
  if (own !== undefined) return own;
  return group.leader() === undefined ? 'no coordinator is elected' : undefined;
}

/**
 * How a request uses the indexes its path names, for alias resolution:
 * single-index APIs (documents, POST, RESTORE, DUMP) use the write index,
 * index PUT/UPDATE/DELETE define an index, the rest read every index named.
 */
function indexUse(resource: Resource, method: string): IndexUse {
  if (resource === 'document' || method === 'POST' || method === 'RESTORE' || method === 'DUMP') return 'write';
  if (method === 'PUT' || method === 'UPDATE' || method === 'UPSERT' || method === 'DELETE') return 'define';
  return 'read';
}

/** Configuration-file templates (validated, 400 text on failure) replace those of the same name in the cluster state. */
async function loadTemplates(registry: IndexRegistry, given: Record<string, unknown> | undefined): Promise<void> {
  if (given === undefined || Object.keys(given).length === 0) return;
  const parsed = Object.entries(given).map(([name, body]) => [name, parseTemplate(name, body)] as const);
  await registry.updateState((state) => {
    const templates = { ...state.templates };
    for (const [name, template] of parsed) templates[name] = template;
    return isDeepStrictEqual(templates, state.templates) ? undefined : { ...state, templates };
  });
}

/** `document.get`, `index.put`, `templates.put`…: the operation label, built once per resource and method. */
const OPERATION_NAMES: Record<Resource, Map<string, string>> = {
  root: new Map(), index: new Map(), document: new Map(), templates: new Map(), aliases: new Map(), keys: new Map(),
};
function operationName(resource: Resource, method: string): string {
  const names = OPERATION_NAMES[resource];
  let name = names.get(method);
  if (name === undefined) {
    name = `${resource}.${method.toLowerCase()}`;
    // Unknown (client-chosen) methods are not remembered: the table stays bounded.
    if (METHOD_LABELS.has(method)) names.set(method, name);
  }
  return name;
}

/**
 * Generated request ids: a random per-process prefix and a counter — unique
 * across restarts and processes like a UUID, without drawing random bytes
 * per request.
 */
const REQUEST_ID_PREFIX = randomBytes(8).toString('hex');
let requestCounter = 0;
function nextRequestId(): string {
  return `${REQUEST_ID_PREFIX}-${(++requestCounter).toString(16)}`;
}

/** Methods that write a document (or its stored content): they never take a drill selector (API.md §1.3). */
const WRITES = new Set(['PUT', 'POST', 'RESTORE', 'UPDATE', 'UPSERT', 'PATCH', 'DELETE']);

/**
 * A write whose last path segment has a raw `.` that does not start a known
 * content extension is refused: applied to the ID before the dot, it would
 * overwrite another document (`gir1.2-cvc-1.0` and `gir1.2-ostree-1.0` are
 * both `gir1`). `Lenna.png` still stores content under `Lenna`.
 */
function refuseDrillSelector(ctx: RequestContext): void {
  const { id, selector } = ctx.path;
  if (id !== undefined && selector !== undefined && extensionType(selector) === undefined) throw apiErrors.dotInWrittenId(id, selector);
}

function resourceOf(path: ParsedPath): Resource {
  if (path.id !== undefined) return 'document';
  return path.indexes.length > 0 ? 'index' : 'root';
}

function prettyOf(query: string): boolean | undefined {
  try {
    const params = new QueryParams(query);
    return params.has('pretty') ? params.flag('pretty', true) : undefined;
  } catch {
    return undefined;
  }
}

/** Every active node's figures (`node.stats`); a node that fails or is slow to answer is left out. */
async function askNodeStats(nodes: NodeDirectory): Promise<NodeStatsReply[]> {
  const replies = await Promise.all(nodes.activeNames().map((name) =>
    nodes.get(name)?.client.call('node.stats', {}, { timeoutMs: NODE_STATS_TIMEOUT_MS }).catch(() => undefined)));
  return replies.filter((r): r is NodeStatsReply => r !== undefined);
}

/** The first shard copy whose segment flush keeps failing, as a readiness reason. */
function flushFailureOf(nodes: readonly NodeStatsReply[]): string | undefined {
  for (const node of nodes) {
    for (const copy of node.shards) {
      const failure = copy.flushFailure;
      if (failure === undefined) continue;
      return `shard copy ${copy.index} #${copy.shard} on node ${node.name} cannot flush its write buffer into a segment `
        + `(${failure.failures} failures since ${new Date(failure.sinceMs).toISOString()}): ${failure.message}`;
    }
  }
  return undefined;
}
