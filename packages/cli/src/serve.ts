/**
 * `tessera serve`: the embedded server — a coordinator and one shard node in
 * one process, joined by the in-process transport, or with `--shard-workers
 * N` the node's copies served by N worker threads (@tessera/node
 * worker-pool.ts) while the coordinator keeps the main thread. What `npm
 * start` runs.
 */
import { mkdir } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import type { SecureContextOptions } from 'node:tls';
import {
  Coordinator, NodeDirectory, parseCorsOrigins, REPLICATION_DEFAULTS, type ClusterState, type CoordinatorGroup, type StateStore,
} from '@tessera/coordinator';
import { dashboardFiles } from '@tessera/dashboard';
import { bodyFormatOf, createHttpServer, mediaTypeOf, type HttpServer, type RequestHead } from '@tessera/http';
import { CONTENT_DEFAULTS, SHARD_DEFAULTS, SHARD_INDEX_DEFAULTS, STORE_MEMORY_DEFAULTS } from '@tessera/engine';
import { replayCommitLog, ShardNode, ShardWorkerPool } from '@tessera/node';
import { DOCUMENT_LIMITS_DEFAULTS } from '@tessera/schema';
import { InProcessClient, type NodeCalls, type RpcClient } from '@tessera/rpc';
import type { Logger } from 'pino';
import { lockDataDirectory } from './data-lock.js';
import { loadServerTls, reloadTlsOnHangup, type TlsListener } from './tls-files.js';
import { shardNodeOptions, type ShardHostOptions } from './shard-host.js';
import type { ShardWorkerData } from './shard-worker.js';
import { logLinesDropped } from './logging.js';
import { TESSERA_VERSION } from './version.js';

/** What the HTTP API is told, under the same names in the config file and in the options: limits, timeouts, policies. */
export interface ApiSettings {
  bodyBytesMax: number;
  restoreBodyBytesMax: number;
  /** Largest stored-content body, bytes. */
  contentBodyBytesMax: number;
  /** Largest YAML body, bytes (at most bodyBytesMax). */
  yamlBodyBytesMax: number;
  /** Request body bytes all connections may hold at once (503 `http_overloaded` beyond). */
  bodiesBytesMax: number;
  headerBytesMax: number;
  urlBytesMax: number;
  idleTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  depthMax: number;
  fieldsMax: number;
  /** What one document may cost (@tessera/schema document-limits.ts). */
  valuesPerFieldMax: number;
  documentValuesMax: number;
  stringBytesMax: number;
  documentWordsMax: number;
  /** `--strict`: every new field needs `_type`, every new index `_settings`. */
  strict: boolean;
  shutdownGraceMs: number;
  slowRequestMs: number;
  /** A node lost this long has its shard copies re-allocated to other nodes. */
  nodeLeftDelayMs: number;
  /** HTTPS: the certificate chain and key files (PEM); '' for both: plain HTTP (tls-files.ts). */
  tlsCert: string;
  tlsKey: string;
  /** `--cors-origin`: '*', origins separated by commas, or '' for no CORS (@tessera/coordinator request/cors.ts). */
  corsOrigin: string;
}

export interface ServeOptions extends ShardHostOptions, ApiSettings {
  host: string;
  port: number;
  dataDir: string;
  nodeName: string;
  clusterName: string;
  numberOfShards: number;
  numberOfReplicas: number;
  /** Index templates of the config file by name (API.md §16.1), stored in the cluster state at start. */
  templates?: Record<string, unknown>;
  /** The master API key (API.md §16.3); absent: no request needs a key. */
  apiKey?: string;
  /** Worker threads serving the shard copies: 0 keeps the node on the main thread; `auto`: shardWorkersOf. */
  shardWorkers: number | 'auto';
  /** The workers log as the main thread does: pretty lines or JSON. */
  logPretty: boolean;
}

export const SERVE_DEFAULTS: Omit<ServeOptions, 'nodeName'> = {
  host: '127.0.0.1',
  port: 8880,
  dataDir: './data',
  clusterName: 'tessera',
  numberOfShards: 5,
  numberOfReplicas: 1,
  bodyBytesMax: 64 * 1024 * 1024,
  restoreBodyBytesMax: 4 * 1024 * 1024 * 1024,
  contentBodyBytesMax: 100 * 1024 * 1024,
  // yaml builds a syntax tree of ~300 bytes per token before a value exists, and each heavy body's tree outlived
  // young-generation collections: 4.9 MB YAML bodies held old space at 100-120 MB in issue 18's fuzz run, where
  // the same bodies in JSON or MessagePack cost milliseconds. YAML is written by hand (SnakeYAML's default cap:
  // 3 MB); 2 MiB holds the longest document string (stringBytesMax, 1 MiB) quoted and escaped.
  yamlBodyBytesMax: 2 * 1024 * 1024,
  // Ten of the largest stored-content bodies at once: enough connections each sending a body up to its limit would
  // otherwise hold connections × 100 MiB (docs/http.md "Limits").
  bodiesBytesMax: 1024 * 1024 * 1024,
  headerBytesMax: 16 * 1024,
  urlBytesMax: 8 * 1024,
  idleTimeoutMs: 60_000,
  // A head takes milliseconds; 10 s bounds how long a slow-header client holds a connection (docs/http.md).
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 30_000,
  depthMax: 128,
  fieldsMax: 10_000,
  ...DOCUMENT_LIMITS_DEFAULTS,
  strict: false,
  documentCacheBytesMax: 64 * 1024 * 1024,
  storeWriteBufferBytes: SHARD_DEFAULTS.storeWriteBufferBytes,
  storeMemoryBytesMax: STORE_MEMORY_DEFAULTS.bytesMax,
  contentVolumeBytesMax: CONTENT_DEFAULTS.volumeBytesMax,
  // The engine's own defaults (ShardIndex), so the config reference can show them.
  writeBufferBytesMax: SHARD_INDEX_DEFAULTS.writeBufferBytesMax,
  writeBufferOpsMax: SHARD_INDEX_DEFAULTS.writeBufferOpsMax,
  shutdownGraceMs: 10_000,
  slowRequestMs: 1000,
  nodeLeftDelayMs: REPLICATION_DEFAULTS.nodeLeftDelayMs,
  tlsCert: '',
  tlsKey: '',
  corsOrigin: '',
  // 0 until a machine with many cores shows the workers' gain (docs/operations.md, "Shard workers"): on 2 cores they cost throughput.
  shardWorkers: 0,
  logPretty: false,
};

/**
 * Below this many cores `auto` keeps the node on the main thread: with two,
 * the workers and the coordinator compete for the same cores, and the
 * thread hop (a structured clone each way, no synchronous cached GET) costs
 * more than it gives (docs/operations.md, "Shard workers", measured).
 */
export const SHARD_WORKERS_AUTO_CORES_MIN = 3;

/**
 * The worker threads `shardWorkers` asks for: a number as is; `auto` one per
 * core up to the default number of shards of an index (a worker serves whole
 * shard copies), none on a machine of fewer than SHARD_WORKERS_AUTO_CORES_MIN cores.
 */
export function shardWorkersOf(setting: number | 'auto', numberOfShards: number, cores = availableParallelism()): number {
  if (setting !== 'auto') return setting;
  return cores < SHARD_WORKERS_AUTO_CORES_MIN ? 0 : Math.min(cores, numberOfShards);
}

/** What the HTTP API needs; `serve` and `coordinator` share it. */
export type HttpApiOptions = Pick<ServeOptions, 'host' | 'port' | 'dataDir' | 'clusterName' | 'numberOfShards' | 'numberOfReplicas'
  | 'bodyBytesMax' | 'restoreBodyBytesMax' | 'contentBodyBytesMax' | 'yamlBodyBytesMax' | 'bodiesBytesMax' | 'headerBytesMax' | 'urlBytesMax' | 'idleTimeoutMs' | 'headersTimeoutMs' | 'bodyTimeoutMs'
  | 'depthMax' | 'fieldsMax' | 'valuesPerFieldMax' | 'documentValuesMax' | 'stringBytesMax' | 'documentWordsMax' | 'strict' | 'shutdownGraceMs' | 'slowRequestMs' | 'nodeLeftDelayMs' | 'templates' | 'apiKey'
  | 'tlsCert' | 'tlsKey' | 'corsOrigin'>;

export interface RunningServer {
  port: number;
  host: string;
  close(): Promise<void>;
}

export async function serve(options: ServeOptions, log: Logger): Promise<RunningServer> {
  // Before anything is locked or opened: an unusable certificate stops the start here.
  const tls = await loadServerTls(options);
  const dataDir = resolve(options.dataDir);
  await mkdir(dataDir, { recursive: true });
  // Before anything is written: the cluster state here, and the node's copies (which a `tessera node` could also be given).
  const dataLock = await lockDataDirectory(dataDir);
  const nodeDir = join(dataDir, 'nodes', options.nodeName);
  const nodeLock = await lockDataDirectory(nodeDir);
  const workers = shardWorkersOf(options.shardWorkers, options.numberOfShards);
  const node = workers === 0 ? inProcessNode(options, nodeDir, log) : await workerNode(options, nodeDir, workers, log);
  log.info({ shardWorkers: workers }, workers === 0 ? 'shard copies served on the main thread' : 'shard copies served by worker threads');
  const nodes = new NodeDirectory();
  nodes.add({
    name: options.nodeName,
    client: node.client,
    host: options.host,
    httpPort: options.port,
    role: 'coordinator+shard',
    local: true,
  });
  const coordinator = await createCoordinator({ ...options, dataDir }, options.nodeName, nodes, log);
  const http = await listenHttp(coordinator, options, log, { dataDir, node: options.nodeName }, tls);
  const stopReloading = tls === undefined ? undefined : reloadTlsOnHangup(options, [http], log);
  return {
    port: http.port,
    host: http.host,
    async close() {
      stopReloading?.();
      await http.close(options.shutdownGraceMs);
      await node.close();
      await nodeLock.release();
      await dataLock.release();
    },
  };
}

/** The embedded node and its client; `close` flushes and closes its copies. */
interface EmbeddedNode {
  client: RpcClient<NodeCalls>;
  close(): Promise<void>;
}

/** The node on the main thread: cached GETs answered synchronously (`callNow`). */
function inProcessNode(options: ServeOptions, nodeDir: string, log: Logger): EmbeddedNode {
  const node = new ShardNode(shardNodeOptions(options, options.nodeName, nodeDir, log));
  node.warm();
  return { client: new InProcessClient(node.handle, {}, node.handleNow), close: () => node.close() };
}

/**
 * The node over `workers` threads, each with an even share of its memory
 * budgets (so the process holds what the settings say, whatever the number
 * of workers). A worker that fails is an uncaught error of the process:
 * logged fatal, exit 1 (lifecycle.ts), and the next start reopens every
 * copy from disk — no server half served. Resolves once every worker has
 * loaded and answered, so the server listens only when its copies can be
 * reached (a worker that cannot load fails the start).
 */
async function workerNode(options: ServeOptions, nodeDir: string, workers: number, log: Logger): Promise<EmbeddedNode> {
  // A run without workers may have left `?commit` batches in the node's commit log: into their copies before any opens.
  await (await replayCommitLog(nodeDir, log)).close();
  const host: ShardHostOptions = {
    ...pickShardHost(options),
    documentCacheBytesMax: Math.floor(options.documentCacheBytesMax / workers),
    storeMemoryBytesMax: Math.floor(options.storeMemoryBytesMax / workers),
  };
  const pool = new ShardWorkerPool({
    workers,
    entry: new URL('./shard-worker.js', import.meta.url),
    name: options.nodeName,
    workerData: (worker): ShardWorkerData => ({
      worker, name: options.nodeName, nodeDir, host, logLevel: log.level, logPretty: options.logPretty,
    }),
    onFailure: (err) => queueMicrotask(() => {
      throw err;
    }),
  });
  try {
    await pool.call('node.info', {});
  } catch (err) {
    await pool.close();
    throw err;
  }
  return { client: pool, close: () => pool.close() };
}

/** The ShardHostOptions of `options`, alone: what crosses to a worker must be plain data. */
function pickShardHost(options: ShardHostOptions): ShardHostOptions {
  const host: ShardHostOptions = {
    documentCacheBytesMax: options.documentCacheBytesMax,
    storeWriteBufferBytes: options.storeWriteBufferBytes,
    storeMemoryBytesMax: options.storeMemoryBytesMax,
    contentVolumeBytesMax: options.contentVolumeBytesMax,
    writeBufferBytesMax: options.writeBufferBytesMax,
    writeBufferOpsMax: options.writeBufferOpsMax,
  };
  if (options.scripts !== undefined) host.scripts = options.scripts;
  return host;
}

/** The coordinator over the cluster state in `dataDir` and the nodes of `nodes`. */
export async function createCoordinator(options: HttpApiOptions, name: string, nodes: NodeDirectory, log: Logger,
  shared?: { store: StateStore<ClusterState>; group: CoordinatorGroup; forwardCa?: Buffer | undefined; clusterSecret?: string }): Promise<Coordinator> {
  const cors = parseCorsOrigins(options.corsOrigin);
  const dashboard = await loadDashboard(log);
  return Coordinator.create({
    ...(dashboard === undefined ? {} : { dashboard }),
    ...(shared === undefined ? {} : { state: shared.store, group: shared.group }),
    ...(shared?.forwardCa === undefined ? {} : { forwardCa: shared.forwardCa }),
    ...(shared?.clusterSecret === undefined ? {} : { clusterSecret: shared.clusterSecret }),
    ...(cors === undefined ? {} : { cors }),
    identity: {
      name,
      clusterName: options.clusterName,
      version: TESSERA_VERSION,
      libraries: {},
    },
    stateFile: join(options.dataDir, 'cluster-state.json'),
    nodes,
    indexDefaults: { number_of_shards: options.numberOfShards, number_of_replicas: options.numberOfReplicas },
    strict: options.strict,
    ...(options.templates === undefined ? {} : { templates: options.templates }),
    ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
    // An array longer than a field may hold can be no document's; searches and schemas are far smaller.
    decodeLimits: { depthMax: options.depthMax, fieldsMax: options.fieldsMax, yamlAliasesMax: 100, arrayItemsMax: options.valuesPerFieldMax },
    documentLimits: {
      valuesPerFieldMax: options.valuesPerFieldMax, documentValuesMax: options.documentValuesMax,
      stringBytesMax: options.stringBytesMax, documentWordsMax: options.documentWordsMax,
    },
    log,
    slowRequestMs: options.slowRequestMs,
    nodeLeftDelayMs: options.nodeLeftDelayMs,
    restoreBatchItems: 1000,
    restoreItemBytesMax: options.bodyBytesMax,
  });
}

/** The dashboard's files (API.md §16.4), read once; a server whose dashboard was not built serves the API without it. */
async function loadDashboard(log: Logger): Promise<Map<string, Buffer> | undefined> {
  try {
    return await dashboardFiles();
  } catch (err) {
    log.warn({ err }, 'no dashboard: /.dashboard/ answers 404');
    return undefined;
  }
}

/**
 * The body limit of one request, checked against Content-Length before any
 * body byte is read (a chunked body as counted): RESTORE streams its own,
 * stored content (any body that is not a document codec) has its own, and a
 * YAML body the smaller of its own and bodyBytesMax.
 */
function requestBodyBytesMax(head: RequestHead, options: HttpApiOptions): number {
  if (head.method === 'RESTORE') return options.restoreBodyBytesMax;
  const format = bodyFormatOf(mediaTypeOf(head.headers['content-type']));
  if (format === 'opaque') return options.contentBodyBytesMax;
  if (format === 'yaml') return Math.min(options.yamlBodyBytesMax, options.bodyBytesMax);
  return options.bodyBytesMax;
}

/**
 * Serve the coordinator's HTTP API (HTTPS with `tls`, from loadServerTls);
 * logs `listening` (with `fields`) once it does, and tells the coordinator
 * its address for `/.nodes`.
 */
export async function listenHttp(coordinator: Coordinator, options: HttpApiOptions, log: Logger, fields: Record<string, unknown>,
  tls: SecureContextOptions | undefined): Promise<{ port: number; host: string; close(graceMs: number): Promise<void> } & TlsListener> {
  const http: HttpServer = createHttpServer({
    // RESTORE bodies are streamed item by item with their own, larger limit (API.md §13).
    streamBody: (head) => head.method === 'RESTORE',
    bodyBytesMax: (head) => requestBodyBytesMax(head, options),
    bodiesBytesMax: options.bodiesBytesMax,
    headerBytesMax: options.headerBytesMax,
    urlBytesMax: options.urlBytesMax,
    idleTimeoutMs: options.idleTimeoutMs,
    headersTimeoutMs: options.headersTimeoutMs,
    bodyTimeoutMs: options.bodyTimeoutMs,
    serverName: `Tessera/${TESSERA_VERSION}`,
    onError: (err) => log.error({ err }, 'request failed'),
    ...(tls === undefined ? {} : { tls }),
  }, coordinator.handle);
  coordinator.metrics.attach({
    documentsByIndex: () => coordinator.documentsByIndex(),
    connections: () => http.connections,
    bodyBytesHeld: () => http.bodyBytesHeld,
    nodeStats: () => coordinator.nodeStats(),
    logLinesDropped,
  });
  const address = await http.listen(options.port, options.host);
  coordinator.advertise({ host: address.host, httpPort: address.port });
  log.info({ host: address.host, port: address.port, scheme: tls === undefined ? 'http' : 'https', ...fields }, 'listening');
  return {
    port: address.port,
    host: address.host,
    replaceTls: (replacement) => http.replaceTls(replacement),
    close: (graceMs) => {
      // Not ready from the first moment of a shutdown; requests already in flight are still answered.
      coordinator.beginShutdown();
      return http.close(graceMs);
    },
  };
}

/**
 * The embedded node's name. Fixed rather than the host name: shard copies are
 * allocated to node names in the cluster state, so a renamed host must not
 * orphan its data.
 */
export const DEFAULT_NODE_NAME = 'node1';
