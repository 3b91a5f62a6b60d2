/**
 * The coordinator: turns HTTP requests into API operations (API.md §3.1
 * routing table), reaches shard copies only through RPC clients, and renders
 * every result and every failure in the negotiated format.
 */
import { toTesseraError, type TesseraError } from '@tessera/errors';
import type { DecodeLimits, HttpRequest, HttpResponse } from '@tessera/http';
import type { Logger } from 'pino';
import { ClusterInfo, type ClusterIdentity } from './cluster/info.js';
import type { NodeDirectory } from './cluster/nodes.js';
import { DocumentHandlers } from './documents/handlers.js';
import { apiErrors } from './errors.js';
import { IndexHandlers } from './indexes/handlers.js';
import { EMPTY_CLUSTER_STATE, IndexRegistry, type ClusterState } from './indexes/registry.js';
import type { IndexSettings } from './indexes/settings.js';
import { RequestContext } from './request/context.js';
import { parsePath, type ParsedPath } from './request/path.js';
import { QueryParams } from './request/params.js';
import { render, renderError, type Reply } from './response/respond.js';
import { applySelector } from './response/selector.js';
import { ShardRouter } from './routing.js';
import { LocalStateStore } from './state/local-store.js';

export interface CoordinatorOptions {
  identity: ClusterIdentity;
  /** File holding the cluster state. */
  stateFile: string;
  nodes: NodeDirectory;
  indexDefaults: IndexSettings;
  decodeLimits: DecodeLimits;
  log: Logger;
}

const ALLOW = 'GET, HEAD, PUT, POST, UPDATE, UPSERT, PATCH, DELETE, INFO, SEARCH, COUNT, COMMIT, DUMP, RESTORE, OPTIONS';

type Resource = 'root' | 'index' | 'document';

export class Coordinator {
  private constructor(
    private readonly options: CoordinatorOptions,
    private readonly documents: DocumentHandlers,
    private readonly indexes: IndexHandlers,
    private readonly cluster: ClusterInfo,
  ) {}

  static async create(options: CoordinatorOptions): Promise<Coordinator> {
    const store = await LocalStateStore.open<ClusterState>(options.stateFile, EMPTY_CLUSTER_STATE);
    const registry = new IndexRegistry(store, options.nodes, options.indexDefaults);
    const router = await ShardRouter.create();
    return new Coordinator(
      options,
      new DocumentHandlers(registry, router),
      new IndexHandlers(registry),
      new ClusterInfo(options.identity, options.nodes, registry, options.indexDefaults),
    );
  }

  /** The HTTP handler. Never throws: every failure becomes an error response. */
  readonly handle = async (req: HttpRequest): Promise<HttpResponse> => {
    let pretty: boolean | undefined;
    try {
      const path = parsePath(req.path);
      const ctx = new RequestContext(req, path, this.options.decodeLimits);
      pretty = ctx.options.pretty;
      const reply = await this.dispatch(ctx, resourceOf(path));
      return render(req, reply, pretty);
    } catch (err) {
      const error = toTesseraError(err);
      if (error.status >= 500) this.options.log.error({ err, method: req.method, path: req.path }, error.message);
      if (pretty === undefined) pretty = prettyOf(req.query);
      return renderError(req, error as TesseraError, pretty);
    }
  };

  private async dispatch(ctx: RequestContext, resource: Resource): Promise<Reply> {
    const method = ctx.method;
    if (method === 'OPTIONS') return { status: 200, headers: { Allow: ALLOW } };
    if (method === 'OPEN' || method === 'CLOSE') throw apiErrors.notImplemented(method);
    switch (resource) {
      case 'root':
        if (method === 'GET') return { status: 200, value: await this.rootValue(ctx) };
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
          case 'SEARCH': case 'COUNT': case 'DUMP': case 'RESTORE': throw apiErrors.notImplemented(method);
        }
        break;
      case 'document':
        switch (method) {
          case 'GET': case 'HEAD': return this.documents.get(ctx);
          case 'PUT': case 'RESTORE': return this.documents.index(ctx, false);
          case 'UPDATE': case 'UPSERT': return this.documents.update(ctx, 'update');
          case 'PATCH': return this.documents.update(ctx, 'patch');
          case 'DELETE': return this.documents.delete(ctx);
          case 'INFO': return this.documents.info(ctx);
          case 'DUMP': throw apiErrors.notImplemented(method);
        }
        break;
    }
    throw apiErrors.methodNotAllowed(method, resource === 'root' ? 'the root' : resource === 'index' ? 'an index' : 'a document');
  }

  private async rootValue(ctx: RequestContext): Promise<unknown> {
    const value = await this.cluster.root();
    const selector = ctx.options.selector ?? ctx.path.selector;
    return selector === undefined ? value : applySelector(value, selector);
  }
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
