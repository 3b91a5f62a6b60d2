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
import { NodeLeases } from './cluster/node-leases.js';
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
import { SnapshotHandler } from './bulk/snapshot.js';
import { RestoreHandler } from './bulk/restore.js';
import { SearchHandlers } from './search/handlers.js';
import { LocalStateStore } from './state/local-store.js';
import { Metrics } from './observability/metrics.js';
import { Readiness } from './observability/readiness.js';
import type { NodeStatsReply } from '@tessera/rpc';
import { AdminHandlers, adminPathOf } from './admin/handlers.js';
import { resolveAliases, type IndexUse } from './admin/aliases.js';
import { parseTemplate } from './admin/templates.js';
import type { CoordinatorGroup } from './cluster/coordinator-group.js';
import { Forwarder, servedLocally } from './cluster/forward.js';
import { FollowerLeases, LEASE_FRACTION } from './cluster/follower-leases.js';
import { LEADER_LINK_DEFAULTS, LeaderLink, leaderCallHandler } from './cluster/leader-link.js';
import type { RpcHandler, RpcPeer } from '@tessera/rpc';
import { reachedRevision } from './state/reached.js';
import type { StateStore } from './state/store.js';
import { isKeysPath } from './auth/actions.js';
import { Authorizer } from './auth/authorizer.js';
import { KeyHandlers } from './auth/key-handlers.js';
import { ALL_METHODS, DASHBOARD_PREFIX, endpointOf, endpointRoute, methodNotAllowed, refuseDottedId, resourceRoute, WRITE_METHODS, type ApiServices, type Endpoint, type Resource } from './api/routes.js';
import { openApiDocument } from './api/openapi.js';
import { prefersHtml, StaticFiles } from './dashboard/static-files.js';

/** A forwarded request's longest wait for the elected coordinator's answer (head, and between body chunks). */
const FORWARD_TIMEOUT_MS = 300_000;
/** Longest wait for this coordinator's etcd watch to bring the elected coordinator's revision before a read reads etcd instead. */
const WATCH_CATCH_UP_MS = 1_000;
/** How long reads go on fencing through etcd once the watch did not bring the elected coordinator's revision in time. */
const WATCH_LAG_FENCE_MS = 10_000;

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
  /**
   * The web dashboard's files (API.md §16.4), name → bytes, `index.html` its
   * page; served as given at `/.dashboard/` (and `/` to browsers). Absent:
   * no dashboard (404).
   */
  dashboard?: ReadonlyMap<string, Buffer>;
  /** Certificates (PEM) the elected coordinator's HTTPS and WSS certificates are verified against when requests are forwarded or writes relayed to it. */
  forwardCa?: Buffer;
  /** The cluster secret (`--cluster-secret`) this coordinator presents to the elected one's RPC port (cluster/leader-link.ts); '' or absent: none. */
  clusterSecret?: string;
}

/** What the response of a routed request needs to know of it: its operation (metrics, logs) and `?pretty`. */
interface Routed {
  operation?: string;
  pretty?: boolean;
}

/** Method label of the request metrics: known methods, else OTHER (client input must not grow label sets). */
const METHOD_LABELS = new Set(KNOWN_METHODS);

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
    handlers: Omit<ApiServices, 'root' | 'metricsText' | 'readiness' | 'openapi' | 'dashboard'>,
    private readonly cluster: ClusterInfo,
    private readonly forwarder: Forwarder | undefined,
    private readonly authorizer: Authorizer | undefined,
    private readonly leaderLink: LeaderLink | undefined,
    /** Serves `leader.write` of the other coordinators (cluster/leader-link.ts): their peers on this one's RPC port get it. */
    readonly leaderCalls: (peer: RpcPeer) => RpcHandler,
  ) {
    this.cors = options.cors === undefined ? undefined : new CorsPolicy(options.cors, ALL_METHODS);
    let openapi: unknown;
    this.services = {
      ...handlers,
      root: (ctx) => this.rootValue(ctx),
      metricsText: () => this.metrics.text(),
      readiness: () => this.readiness.check(),
      // Built on the first request for it: the table does not change while the server runs.
      openapi: () => (openapi ??= openApiDocument(options.identity.version)),
      dashboard: options.dashboard === undefined ? undefined : new StaticFiles(options.dashboard, 'index.html'),
    };
  }

  private readonly cors: CorsPolicy | undefined;
  /** Until then, reads on this coordinator (not elected) are fenced by a read of etcd: its watch fell behind (`caughtUp`). */
  private fenceThroughEtcdUntil = 0;
  /** What the route table's handlers reach (api/routes.ts). */
  private readonly services: ApiServices;

  static async create(options: CoordinatorOptions): Promise<Coordinator> {
    const store = options.state ?? await LocalStateStore.open<ClusterState>(options.stateFile, EMPTY_CLUSTER_STATE);
    const group = options.group;
    const decides = (): boolean => group === undefined || group.isLeader;
    const metrics = new Metrics();
    const registry = new IndexRegistry(store, options.nodes, options.indexDefaults, (client) => metrics.timeRpc(client));
    registry.decideOnlyWhen(decides);
    // Followers' leases: a fraction of the coordinator lease (follower-leases.ts).
    const followerLeaseMs = group === undefined ? 0 : Math.floor(group.leaseMs * LEASE_FRACTION);
    const leases = group === undefined ? undefined : new FollowerLeases(followerLeaseMs);
    // The elected coordinator acknowledges a change of the state once every follower holding a lease took it.
    const state: StateStore<ClusterState> = store;
    state.fenceCommits?.((revision) => (leases !== undefined && decides() ? leases.fence(revision) : Promise.resolve()));
    const leaderLink = group === undefined ? undefined : new LeaderLink(group, {
      ...LEADER_LINK_DEFAULTS, name: group.name, clusterSecret: options.clusterSecret ?? '', ...(options.forwardCa === undefined ? {} : { ca: options.forwardCa }),
      leaseMs: followerLeaseMs, reachRevision: (revision) => reachedRevision(store, revision, WATCH_CATCH_UP_MS),
    });
    // Writes through primaries, relays to replicas, recoveries and failover, over the registry's cluster state.
    // The coordinator made below: a direct write is fenced as a read is (`caughtUp`).
    let made: Coordinator | undefined;
    const revision = state.revision?.bind(state);
    const replication = new Replicator(registry, options.nodes, {
      log: options.log, decides, ...(options.nodeLeftDelayMs === undefined ? {} : { nodeLeftDelayMs: options.nodeLeftDelayMs }),
      ...(leaderLink === undefined ? {} : {
        leaderWrite: (meta, call, routedAt) => leaderLink.write(meta, call, routedAt),
        leaderRelayFailed: (meta, shard, term, nodes) => leaderLink.relayFailed({ index: meta.path, uuid: meta.uuid, shard, term, nodes }),
      }),
      ...(group === undefined || revision === undefined ? {} : {
        stateRevision: revision,
        fenceState: () => (made === undefined ? Promise.resolve() : made.caughtUp(state)),
        onRoutedWrite: (via) => metrics.countRoutedWrite(via),
      }),
    });
    registry.onIndexDropped((uuid) => replication.forgetIndex(uuid));
    metrics.attachReplication(() => replication.lag());
    const readiness = new Readiness(options.nodes, {
      copiesOn: (node) => registry.list().flatMap((meta) =>
        meta.allocation.flatMap((copies, i) => (copies.includes(node) ? [{ index: meta.path, shard: i + 1 }] : []))),
      open: (node, copy) => registry.client(copy.index, node, copy.shard).call('shard.open', copy),
      flushFailure: async () => flushFailureOf(await askNodeStats(options.nodes)),
      ...(group === undefined ? {} : { blocker: () => groupProblem(group) }),
    }, options.log);
    const foldLeftGrowth = () => registry.foldLeftReservations((reservation, err) =>
      options.log.warn({ err, index: reservation.index }, 'a schema growth left by a stopped coordinator no longer fits its index: dropped'));
    if (decides()) {
      await foldLeftGrowth();
      await loadTemplates(registry, options.templates);
    }
    followMembership(options.nodes, registry, options.log, decides);
    if (group !== undefined) {
      // Every coordinator announces the nodes it sees lost: whichever is elected next knows them (coordinator-group.ts).
      const announce = (): void => group.reportLostNodes(options.nodes.lostNodes());
      options.nodes.on('nodeLost', announce);
      options.nodes.on('nodeJoined', announce);
    }
    // Nodes keeping an etcd lease of their own: lost once it ends (cluster/node-leases.ts).
    const nodeLeases = group === undefined ? undefined : new NodeLeases({
      store, nodes: options.nodes, decides, log: options.log,
      recordedLeased: (name) => registry.snapshot().nodes?.[name]?.etcdLease === true,
      gone: (name) => replication.nodeGone(name),
    });
    // What a revision the elected coordinator gives another one counts on (leader-link.ts): the state read from etcd once since it was elected.
    let readSinceElected: Promise<void> | undefined;
    group?.on('elected', () => {
      readSinceElected = undefined;
      // What a restarted coordinator does: the nodes here are recorded, the others are lost — at once those it or another
      // coordinator saw lost or whose etcd lease is gone, the rest after the rejoin timeout.
      for (const name of options.nodes.activeNames()) recordJoin(registry, options.nodes, name, options.log);
      replication.takeOver(new Map([...nodeLeases?.goneNodes(registry.knownNodes()) ?? [], ...group.lostElsewhere()]));
      foldLeftGrowth().catch((err: unknown) => options.log.error({ err }, 'could not fold the schema growth a stopped coordinator left'));
      loadTemplates(registry, options.templates).catch((err: unknown) => options.log.error({ err }, 'could not store the configured templates'));
    });
    const router = new ShardRouter();
    const documents = new DocumentHandlers(registry, replication, router, options.documentLimits ?? DOCUMENT_LIMITS_DEFAULTS);
    registry.useSchemaPolicy(new SchemaPolicy({
      strict: options.strict ?? false, documents: foreignDocuments(registry, documents, router), log: options.log,
    }));
    readiness.start();
    return made = new Coordinator(
      metrics,
      readiness,
      options,
      registry,
      {
        documents,
        indexes: new IndexHandlers(registry),
        restores: new RestoreHandler(documents, {
          batchItems: options.restoreBatchItems,
          itemBytesMax: options.restoreItemBytesMax,
          decodeLimits: options.decodeLimits,
        }),
        searches: new SearchHandlers(registry, replication),
        dumps: new DumpHandler(registry, router),
        snapshots: new SnapshotHandler(registry, () => store.refresh()),
        admin: new AdminHandlers(registry),
        keys: new KeyHandlers(registry, options.apiKey !== undefined),
      },
      new ClusterInfo(options.identity, options.nodes, registry, replication, options.indexDefaults, group, nodeLeases),
      group === undefined ? undefined
        : new Forwarder(group.name, { timeoutMs: FORWARD_TIMEOUT_MS, ...(options.forwardCa === undefined ? {} : { ca: options.forwardCa }) }),
      options.apiKey === undefined ? undefined
        : new Authorizer(options.apiKey, () => registry.snapshot().keys, (reason) => metrics.countAuthFailure(reason)),
      leaderLink,
      leaderCallHandler({
        decides, stateRevision: () => state.revision?.() ?? 0, get: (path) => registry.get(path), write: (meta, shard, call) => replication.write(meta, shard, call),
        relayFailed: (meta, shard, term, nodes) => replication.relayFailed(meta, shard, term, nodes),
        ...(leases === undefined ? {} : { leases }),
        readSinceElected: () => (readSinceElected ??= store.refresh().then(() => undefined, (err: unknown) => {
          readSinceElected = undefined;
          throw err;
        })),
      }),
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
    // A browser opening the root gets the dashboard's page (API.md §16.4), exactly as at /.dashboard/, which needs no key.
    const path = this.isBrowserAtRoot(req) ? DASHBOARD_PREFIX : req.path;
    // Before anything else, on the coordinator the client reached (a forwarded request keeps its Authorization header).
    const refused = this.authorizer?.check(req, path);
    if (refused !== undefined) return this.fail(req, refused, requestId, undefined, undefined);
    const endpoint = endpointOf(req.method, path);
    if (endpoint !== undefined) {
      return this.endpoint(req, endpoint).then(
        (response) => this.finish(req, response, requestId, undefined),
        (err: unknown) => this.fail(req, err, requestId, undefined, undefined),
      );
    }
    const group = this.options.group;
    const following = group !== undefined && !group.isLeader;
    // A streamed body (RESTORE) cannot be sent on once read: such a request goes to the elected coordinator before it is.
    if (following && !servedLocally(req.method) && req.bodyStream !== undefined) return this.forwardToLeader(req, group, requestId);
    const seen: Routed = {};
    let reply: Reply | Promise<Reply>;
    try {
      reply = following ? this.servedFollowing(req, seen) : this.route(req, seen);
    } catch (err) {
      return this.failedHere(req, err, requestId, seen);
    }
    if (typeof (reply as Partial<Promise<Reply>>).then !== 'function') {
      return this.rendered(req, reply as Reply, requestId, seen.pretty, seen.operation);
    }
    return (reply as Promise<Reply>).then(
      (settled) => this.rendered(req, settled, requestId, seen.pretty, seen.operation),
      (err: unknown) => this.failedHere(req, err, requestId, seen),
    );
  };

  /** A failure of a request run here; one only the elected coordinator can run (`leader_required`: nothing was done) goes there. */
  private failedHere(req: HttpRequest, err: unknown, requestId: string, seen: Routed, runAgain = true): HttpResponse | Promise<HttpResponse> {
    const group = this.options.group;
    if (group !== undefined && toTesseraError(err).code === 'leader_required') {
      // Elected while the request waited for the coordinator it followed: it runs here after all, once.
      if (group.isLeader && runAgain) return this.runAgainElected(req, requestId);
      return this.forwardToLeader(req, group, requestId);
    }
    return this.fail(req, err, requestId, seen.pretty, seen.operation);
  }

  private async runAgainElected(req: HttpRequest, requestId: string): Promise<HttpResponse> {
    const seen: Routed = {};
    try {
      return this.rendered(req, await this.route(req, seen), requestId, seen.pretty, seen.operation);
    } catch (err) {
      return this.failedHere(req, err, requestId, seen, false);
    }
  }

  /** `GET /` whose Accept ranks HTML above the API's types, on a server with a dashboard (any other client gets the JSON of API.md §12.1). */
  private isBrowserAtRoot(req: HttpRequest): boolean {
    return req.path === '/' && req.method === 'GET' && this.services.dashboard !== undefined && prefersHtml(req.headers.accept);
  }

  /** Dispatch a request here; `seen` learns its operation and `?pretty` as soon as they are known (for an error too). */
  private route(req: HttpRequest, seen: Routed): Reply | Promise<Reply> {
    if (isKeysPath(req.path)) {
      this.services.keys.checkEnabled(req.method);
      const name = req.path.slice('/.keys'.length).replace(/^\//, '').replace(/\/$/, '');
      return name === '' ? this.dispatch(req, 'keys', NO_PATH, seen) : this.dispatch(req, 'key', { indexes: [], id: name, selector: undefined }, seen);
    }
    const admin = adminPathOf(req.path);
    if (admin !== undefined) {
      const templates = admin.collection === 'templates';
      if (admin.name === undefined) return this.dispatch(req, templates ? 'templates' : 'aliases', NO_PATH, seen);
      return this.dispatch(req, templates ? 'template' : 'alias', { indexes: [], id: admin.name, selector: undefined }, seen);
    }
    const parsed = parsePath(req.path, { allowWildcards: req.method === 'SEARCH' || req.method === 'COUNT' });
    const resource = resourceOf(parsed);
    // Aliases resolve here, once, from one cluster state: the handler sees indexes only (admin/aliases.ts).
    return this.dispatch(req, resource, resolveAliases(parsed, indexUse(resource, req.method), this.registry.aliases()), seen);
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
    // A document write needs no read of etcd: the elected coordinator runs it only if the state it was routed from is its own.
    if (servedLocally(req.method) && state?.health().connected === true) await this.caughtUp(state);
    return this.route(req, seen);
  }

  /**
   * This coordinator's state holds every change acknowledged before the
   * call: once its watch brought the revision the elected coordinator
   * decides at (one message over their open connection), else after a read
   * of etcd. Never throws: with neither, the state is served as it is.
   */
  async caughtUp(state: StateStore<ClusterState>): Promise<void> {
    // A lease from the elected coordinator: every acknowledged change is at or below the revision it gave (follower-leases.ts).
    const leased = this.leaderLink?.leasedRevision();
    if (leased !== undefined && (state.revision?.() ?? 0) >= leased) {
      this.metrics.countStateFence('lease');
      return;
    }
    const revision = Date.now() < this.fenceThroughEtcdUntil ? undefined : await this.leaderLink?.electedRevision().catch(() => undefined);
    if (revision !== undefined) {
      if (await reachedRevision(state, revision, WATCH_CATCH_UP_MS)) {
        this.metrics.countStateFence('elected');
        return;
      }
      // The watch is behind (stalled, reconnecting): reads read etcd for a while rather than each waiting it out first.
      this.fenceThroughEtcdUntil = Date.now() + WATCH_LAG_FENCE_MS;
    }
    this.metrics.countStateFence('etcd');
    await state.refresh().catch(() => false);
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
    await this.leaderLink?.close();
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

  /** Endpoints outside the index/document grammar: metrics, health, the OpenAPI document. */
  private async endpoint(req: HttpRequest, endpoint: Endpoint): Promise<HttpResponse> {
    const route = endpointRoute(endpoint, req.method);
    if (route === undefined) throw methodNotAllowed(endpoint, req.method);
    const response = await route.handle(this.services, req);
    // The root answers HTML or JSON by Accept: a cache must key it by Accept.
    if (endpoint === 'dashboard' && req.path === '/') {
      const headers = response.headers ?? (response.headers = {});
      headers.Vary = headers.Vary === undefined ? 'Accept' : `Accept, ${headers.Vary}`;
    }
    return response;
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

  /**
   * The handler of a request, by the route table (api/routes.ts); a reply it
   * has at once is returned as is (a cached GET), else a promise of it.
   */
  private dispatch(req: HttpRequest, resource: Resource, path: ParsedPath, seen: Routed): Reply | Promise<Reply> {
    const method = req.method;
    const route = resourceRoute(resource, method);
    seen.operation = route?.operation;
    const ctx = new RequestContext(req, path, this.options.decodeLimits);
    // A document write on a coordinator that is not elected runs on the elected one only at the state it was routed from.
    if (this.options.group?.isLeader === false) ctx.routedAt = this.options.state?.revision?.() ?? 0;
    seen.pretty = ctx.options.pretty;
    if (resource === 'document' && WRITE_METHODS.has(method)) refuseDottedId(ctx);
    if (route !== undefined) {
      // Of the requests that change something, a coordinator that is not elected runs only document writes (cluster/leader-link.ts).
      if (route.anyCoordinator !== true && !servedLocally(method) && this.options.group?.isLeader === false) {
        throw apiErrors.leaderRequired(`${route.operation} runs on the elected coordinator`);
      }
      return route.handle(this.services, ctx);
    }
    if (method === 'OPEN' || method === 'CLOSE') throw apiErrors.notImplemented(method);
    throw methodNotAllowed(resource, method);
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
  if (decides()) for (const name of nodes.activeNames()) recordJoin(registry, nodes, name, log);
  nodes.on('nodeJoined', (entry) => {
    log.info({ node: entry.name, host: entry.host, dataDir: entry.dataDir, pid: entry.pid }, 'node joined');
    if (decides()) recordJoin(registry, nodes, entry.name, log);
  });
  nodes.on('nodeLost', (entry, reason) => log.warn({ node: entry.name, reason }, 'node lost'));
}

/** A node in the cluster state (with whether it keeps an etcd lease), and its pending drops done (the elected coordinator's work). */
function recordJoin(registry: IndexRegistry, nodes: NodeDirectory, name: string, log: Logger): void {
  registry.nodeJoined(name, nodes.get(name)?.etcdLease === true).catch((err: unknown) => log.error({ err, node: name }, 'could not record the node in the cluster state'));
}

/** Why a coordinator of several cannot serve: its own lease, or no elected coordinator to relay writes through. */
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

/** The path of a request that names no index: the root and the administration lists. */
const NO_PATH: ParsedPath = { indexes: [], id: undefined, selector: undefined };

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
