/**
 * Configuration of the long-running commands (`tessera serve`, `coordinator`,
 * `node`): one table of settings (SETTINGS), each naming the commands it
 * applies to, from which the command-line flags, the `TESSERA_*` environment
 * variables, the config-file keys, their validation and the reference table
 * of docs/operations.md are all derived, so none of them can drift from the
 * others.
 *
 * Precedence, per setting: flag > environment > config file > default. The
 * config file (`--config FILE` or `TESSERA_CONFIG`) is JSON5 (`.json`,
 * `.json5`) or YAML (`.yaml`, `.yml`): one mapping whose keys are the flag
 * names in camelCase (`bodyBytesMax`) or kebab-case (`body-bytes-max`). Every
 * problem (unknown key, wrong type, value out of range, bad variable) is
 * reported at once, naming the key and where it came from, before anything
 * starts.
 */
import { readFile } from 'node:fs/promises';
import { dirname, extname, resolve } from 'node:path';
import JSON5 from 'json5';
import { parse as parseYaml } from 'yaml';
import { SCRIPT_DEFAULTS, STORE_WRITE_BUFFER_BYTES_MAX, STORE_WRITE_BUFFER_BYTES_MIN, type ScriptRunnerOptions } from '@tessera/engine';
import { PRIMARY_LEASE_MS_MAX } from '@tessera/node';
import { parseCorsOrigins, parseTemplate } from '@tessera/coordinator';
import { COORDINATOR_DEFAULTS, type CoordinatorProcessOptions } from './coordinator.js';
import { NODE_DEFAULTS, type NodeProcessOptions } from './node.js';
import { DEFAULT_NODE_NAME, SERVE_DEFAULTS, SHARD_WORKERS_AUTO_CORES_MIN, type ApiSettings, type ServeOptions } from './serve.js';
import { TLS_PAIR_PROBLEM } from './tls-files.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The commands that take settings. */
export const COMMANDS = ['serve', 'coordinator', 'node'] as const;
export type CommandName = (typeof COMMANDS)[number];

/** What a process hosting shard copies needs (serve and node): caches, write buffer, script budgets. */
export interface ShardHostConfig {
  documentCacheBytesMax: number;
  storeWriteBufferBytes: number;
  storeMemoryBytesMax: number;
  contentVolumeBytesMax: number;
  writeBufferBytes: number;
  writeBufferOps: number;
  scriptCacheEntriesMax: number;
  scriptCacheTtlMs: number;
  scriptInstructionsMax: number;
  scriptMemoryBytesMax: number;
  scriptTimeoutMs: number;
}

/** Every setting of `tessera serve`, under its config-file key (the flag name in camelCase). */
export interface ServeConfig extends ShardHostConfig, ApiSettings {
  port: number;
  host: string;
  data: string;
  name: string;
  shards: number;
  replicas: number;
  logLevel: LogLevel;
  logPretty: boolean;
  /** The master API key; '' for none (API.md §16.3). */
  apiKey: string;
  /** Listen off loopback without a key (HTTP) or a cluster secret (RPC, relay): exposure.ts. */
  allowAnonymous: boolean;
  /** Worker threads serving the shard copies; `auto`: serve.ts shardWorkersOf. */
  shardWorkers: number | 'auto';
  /** Index templates by name (API.md §16.1): config file only, no flag or variable (FILE_ONLY_KEYS). */
  templates?: Record<string, unknown>;
}

/** `tessera coordinator`: the HTTP API without a shard node, and the RPC listener nodes join. */
export interface CoordinatorConfig extends Omit<ServeConfig, keyof ShardHostConfig>, ClusterTrustConfig {
  rpcHost: string;
  rpcPort: number;
  /** etcd client URLs, comma-separated; '' keeps the cluster state in the data directory. */
  etcd: string;
  etcdPrefix: string;
  coordinatorLeaseMs: number;
}

/** How coordinators and nodes trust each other (docs/tls-cors.md): the CA of wss:// certificates, the shared secret ('' when not given). */
export interface ClusterTrustConfig {
  tlsCa: string;
  clusterSecret: string;
}

/** `tessera node`: a shard node without HTTP, joining a coordinator. */
export interface NodeConfig extends ShardHostConfig, ClusterTrustConfig {
  join: string;
  name: string;
  data: string;
  logLevel: LogLevel;
  logPretty: boolean;
  shutdownGraceMs: number;
  primaryLeaseMs: number;
  /** etcd client URLs, comma-separated; '' keeps no lease. */
  etcd: string;
  etcdPrefix: string;
  nodeLeaseMs: number;
  relayHost: string;
  /** `off`: no relay listener. */
  relayPort: number | 'off';
  /** A relay listener off loopback without a cluster secret (exposure.ts). */
  allowAnonymous: boolean;
  /** The relay listener's certificate chain and key (wss://); '' for neither: ws://. */
  tlsCert: string;
  tlsKey: string;
}

/** The settings of the Lua scripts a shard node runs (API.md §11.4, §13). */
type ScriptSettingKey = 'scriptCacheEntriesMax' | 'scriptCacheTtlMs' | 'scriptInstructionsMax' | 'scriptMemoryBytesMax' | 'scriptTimeoutMs';

export interface CommandConfigs {
  serve: ServeConfig;
  coordinator: CoordinatorConfig;
  node: NodeConfig;
}

export type ConfigKey = keyof ServeConfig | keyof CoordinatorConfig | keyof NodeConfig;

type Kind =
  /** `word`: that word is a value too (`auto`). */
  | { type: 'integer'; min: number; max: number; word?: string }
  | { type: 'string' }
  /** A node name: it names a directory and the holder of shard copies, so a short, plain token (NODE_NAME). */
  | { type: 'name' }
  /** A directory (`file`: a file); relative paths in a config file are taken from the file's directory. */
  | { type: 'path'; file?: true }
  | { type: 'enum'; values: readonly string[] }
  /** A switch: the flag alone sets it; variables and files say true or false. */
  | { type: 'boolean' }
  /** A secret (an API key, the cluster secret): 16 to 1024 visible ASCII characters; never logged nor printed (redactSecrets). */
  | { type: 'secret' }
  /** An absolute URL with one of these schemes (`ws:`); with `list`, one or more separated by commas. */
  | { type: 'url'; protocols: readonly string[]; list?: boolean };

export interface Setting {
  key: ConfigKey;
  /** The long flag without dashes: the key in kebab-case. */
  flag: string;
  short?: string;
  env: string;
  kind: Kind;
  default: number | string | boolean;
  description: string;
  /** The commands that take this setting. */
  commands: readonly CommandName[];
  /** Where a command's default differs from `default`; null: that command needs a value. */
  defaults?: Partial<Record<CommandName, number | string | boolean | null>>;
}

const integer = (min: number, max: number): Kind => ({ type: 'integer', min, max });

function setting(key: ConfigKey, kind: Kind, defaultValue: number | string | boolean, description: string, commands: readonly CommandName[],
  extra: { short?: string; env?: string; defaults?: Setting['defaults'] } = {}): Setting {
  const flag = key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  const s: Setting = { key, flag, env: extra.env ?? `TESSERA_${flag.toUpperCase().replace(/-/g, '_')}`, kind, default: defaultValue, description, commands };
  if (extra.short !== undefined) s.short = extra.short;
  if (extra.defaults !== undefined) s.defaults = extra.defaults;
  return s;
}

/** Most `--shard-workers`: far more threads than any machine has cores only adds memory. */
const SHARD_WORKERS_MAX = 256;

/** Commands serving the HTTP API; commands hosting shard copies; all of them. */
const HTTP: readonly CommandName[] = ['serve', 'coordinator'];
const SHARDS: readonly CommandName[] = ['serve', 'node'];
const ALL: readonly CommandName[] = COMMANDS;

export const SETTINGS: readonly Setting[] = [
  setting('port', integer(0, 65535), SERVE_DEFAULTS.port, 'HTTP port; 0 picks a free one', HTTP, { short: 'p' }),
  setting('host', { type: 'string' }, SERVE_DEFAULTS.host, 'address to listen on', HTTP),
  setting('data', { type: 'path' }, SERVE_DEFAULTS.dataDir, 'data directory (created if missing)', ALL, { short: 'd' }),
  setting('name', { type: 'name' }, DEFAULT_NODE_NAME, 'node name (shard copies are allocated to it: keep it across restarts)', ALL,
    { env: 'TESSERA_NODE_NAME', defaults: { coordinator: COORDINATOR_DEFAULTS.name, node: null } }),
  setting('join', { type: 'url', protocols: ['ws:', 'wss:'], list: true }, NODE_DEFAULTS.join, 'the coordinators\' RPC addresses to join, comma-separated: the node connects to each (every coordinator of the cluster)', ['node']),
  setting('rpcHost', { type: 'string' }, COORDINATOR_DEFAULTS.rpcHost, 'address the RPC listener (for nodes) listens on', ['coordinator']),
  setting('rpcPort', integer(0, 65535), COORDINATOR_DEFAULTS.rpcPort, 'RPC port nodes join (`--join ws://host:port`); 0 picks a free one', ['coordinator']),
  setting('relayHost', { type: 'string' }, NODE_DEFAULTS.relayHost, 'address the relay listener listens on, and that the node announces to its coordinators: other nodes dial it to bring this node the writes they relay as primaries (reachable from them)', ['node']),
  setting('relayPort', { type: 'integer', min: 0, max: 65535, word: 'off' }, NODE_DEFAULTS.relayPort, 'port of the relay listener (0 picks a free one): with it, a primary here relays the writes coordinators send it straight to its replicas itself, and every coordinator of the cluster writes through its primaries instead of through the elected one (docs/cluster.md); off: none, the elected coordinator relays every write of a shard with replicas. With tlsCert and tlsKey it serves wss:// (needed when the coordinators are joined over wss://)', ['node']),
  setting('etcd', { type: 'url', protocols: ['http:', 'https:'], list: true }, COORDINATOR_DEFAULTS.etcd, 'etcd client URLs, comma-separated: the cluster state lives in etcd, and every coordinator given the same etcd and prefix serves the same cluster, one of them elected (docs/cluster.md); empty: a file in the data directory, one coordinator. A node given its coordinators\' etcd keeps a lease there, and is lost as soon as it ends; empty: its connections alone say it is alive', ['coordinator', 'node']),
  setting('etcdPrefix', { type: 'string' }, COORDINATOR_DEFAULTS.etcdPrefix, 'root of this cluster\'s keys in etcd (a node: its coordinators\')', ['coordinator', 'node']),
  setting('coordinatorLeaseMs', integer(1000, 60_000), COORDINATOR_DEFAULTS.coordinatorLeaseMs, 'with --etcd: each coordinator\'s registration and the election live under an etcd lease this long (whole seconds), ms; an elected coordinator that dies or loses etcd is replaced within it', ['coordinator']),
  setting('apiKey', { type: 'secret' }, '', 'master API key: every request but GET /healthz, /readyz and the dashboard page and its files (docs/dashboard.md) then needs `Authorization: Bearer <key>`, and /.keys/ makes scoped keys (docs/security.md); prefer the variable or the file to the flag, which shows in `ps` until the process has started', HTTP),
  setting('allowAnonymous', { type: 'boolean' }, false, 'listen on an address other than loopback without an API key (serve, coordinator: the HTTP API) or without a cluster secret (coordinator: the RPC listener; node: the relay listener): refused otherwise (docs/security.md)', ALL),
  setting('shards', integer(1, 9999), SERVE_DEFAULTS.numberOfShards, 'default number_of_shards of new indexes', HTTP),
  setting('replicas', integer(0, 9998), SERVE_DEFAULTS.numberOfReplicas, 'default number_of_replicas of new indexes', HTTP),
  setting('logLevel', { type: 'enum', values: LOG_LEVELS }, 'info', 'log level', ALL),
  setting('logPretty', { type: 'boolean' }, false, 'log coloured lines for a terminal instead of JSON (needs the pino-pretty package)', ALL),
  setting('bodyBytesMax', integer(0, 2 ** 40), SERVE_DEFAULTS.bodyBytesMax, 'largest request body, bytes (413 beyond); also the largest RESTORE item', HTTP),
  setting('restoreBodyBytesMax', integer(0, 2 ** 50), SERVE_DEFAULTS.restoreBodyBytesMax, 'largest RESTORE body, bytes, streamed (413 beyond)', HTTP),
  setting('contentBodyBytesMax', integer(0, 2 ** 40), SERVE_DEFAULTS.contentBodyBytesMax, 'largest stored-content body (any Content-Type that is not JSON, YAML or MessagePack), bytes (413 beyond)', HTTP),
  setting('yamlBodyBytesMax', integer(0, 2 ** 40), SERVE_DEFAULTS.yamlBodyBytesMax, 'largest YAML body, bytes (413 beyond; at most bodyBytesMax): yaml spends ~300 bytes of heap per token before the value exists', HTTP),
  setting('bodiesBytesMax', integer(1 << 20, 2 ** 50), SERVE_DEFAULTS.bodiesBytesMax, 'request body bytes all connections together may hold at once (those being received, queued and handled; a streamed RESTORE counts its 1 MiB buffer): a request that would go past it is answered 503 `http_overloaded` and its connection closed; at least bodyBytesMax and contentBodyBytesMax', HTTP),
  setting('headerBytesMax', integer(256, 1 << 24), SERVE_DEFAULTS.headerBytesMax, 'largest request line + header section, bytes (431 beyond)', HTTP),
  setting('urlBytesMax', integer(16, 1 << 24), SERVE_DEFAULTS.urlBytesMax, 'longest request-target, bytes (414 beyond); at most headerBytesMax', HTTP),
  setting('headersTimeoutMs', integer(1, 2 ** 31), SERVE_DEFAULTS.headersTimeoutMs, 'time to receive a request head, ms (408 beyond); a new connection that sends nothing this long is closed', HTTP),
  setting('bodyTimeoutMs', integer(1, 2 ** 31), SERVE_DEFAULTS.bodyTimeoutMs, 'longest silence while a body is read, ms (408 beyond)', HTTP),
  setting('idleTimeoutMs', integer(1, 2 ** 31), SERVE_DEFAULTS.idleTimeoutMs, 'idle keep-alive connection lifetime, ms; also how long a client may stop reading a response', HTTP),
  setting('depthMax', integer(1, 100_000), SERVE_DEFAULTS.depthMax, 'deepest nesting of a body (400 beyond)', HTTP),
  setting('fieldsMax', integer(1, 10_000_000), SERVE_DEFAULTS.fieldsMax, 'most object keys in one body (400 beyond)', HTTP),
  setting('valuesPerFieldMax', integer(1, 100_000_000), SERVE_DEFAULTS.valuesPerFieldMax, 'most values one field of a document may hold: array items, nested arrays flattened (400 `too_many_values` beyond)', HTTP),
  setting('documentValuesMax', integer(1, 100_000_000), SERVE_DEFAULTS.documentValuesMax, 'most values (scalars and array items) in one document (400 `document_too_large` beyond)', HTTP),
  setting('stringBytesMax', integer(1, 2 ** 31), SERVE_DEFAULTS.stringBytesMax, 'longest string value of a document, UTF-8 bytes (400 `value_too_large` beyond)', HTTP),
  setting('documentWordsMax', integer(1, 100_000_000), SERVE_DEFAULTS.documentWordsMax, 'most words (runs of letters and digits: at least its text tokens) in the string values of one document (400 `document_too_large` beyond)', HTTP),
  setting('strict', { type: 'boolean' }, SERVE_DEFAULTS.strict, 'every new field needs `_type` and every new index `_settings` (412 otherwise)', HTTP),
  setting('tlsCert', { type: 'path', file: true }, SERVE_DEFAULTS.tlsCert, 'with tlsKey: serve HTTPS on the HTTP port with this certificate chain (PEM); a coordinator\'s RPC listener serves wss:// with it too, and a node\'s relay listener (docs/tls-cors.md)', ALL),
  setting('tlsKey', { type: 'path', file: true }, SERVE_DEFAULTS.tlsKey, 'the private key of tlsCert (PEM, unencrypted)', ALL),
  setting('tlsCa', { type: 'path', file: true }, '', 'certificates (PEM) a wss:// coordinator\'s certificate (node), another node\'s relay listener\'s (node) or an https:// elected coordinator\'s (coordinator, forwarding) is verified against; empty: the system\'s CAs', ['coordinator', 'node']),
  setting('clusterSecret', { type: 'secret' }, '', 'a shared secret every node must present to join its coordinators (give the same to both); empty: none asked; never logged', ['coordinator', 'node']),
  setting('corsOrigin', { type: 'string' }, SERVE_DEFAULTS.corsOrigin, 'origins (scheme://host[:port]) whose pages may call the API, comma-separated, or *: CORS headers and preflights (docs/tls-cors.md); empty: no CORS', HTTP),
  setting('documentCacheBytesMax', integer(0, 2 ** 40), SERVE_DEFAULTS.documentCacheBytesMax, 'document cache of a node (bodies kept as their JSON text), all its shard copies together (least recently used out first), bytes; 0 disables it', SHARDS),
  setting('storeWriteBufferBytes', integer(STORE_WRITE_BUFFER_BYTES_MIN, STORE_WRITE_BUFFER_BYTES_MAX), SERVE_DEFAULTS.storeWriteBufferBytes, 'LevelDB write buffer (memtable) of a shard copy\'s database, bytes; larger means less compaction work under heavy writes, and up to twice this in memory per shard being written', SHARDS),
  setting('storeMemoryBytesMax', integer(1 << 20, 2 ** 40), SERVE_DEFAULTS.storeMemoryBytesMax, 'what the LevelDB databases of a node\'s shard copies may hold in memory together (their write buffers), bytes: past it the fullest write buffers are written out early, past twice it writes wait (up to 1 s) for that; a copy no longer written to has its write buffer written out after 5 s, one written to steadily after 60 s', SHARDS),
  setting('contentVolumeBytesMax', integer(1 << 20, 2 ** 50), SERVE_DEFAULTS.contentVolumeBytesMax, 'a shard copy\'s stored-content volume file is closed and the next one started at this size, bytes', SHARDS),
  setting('writeBufferBytes', integer(1, 2 ** 40), SERVE_DEFAULTS.writeBufferBytesMax, 'write buffer of a shard copy, estimated bytes, before it is flushed into a segment', SHARDS),
  setting('writeBufferOps', integer(1, 100_000_000), SERVE_DEFAULTS.writeBufferOpsMax, 'changes a shard copy\'s write buffer takes before it is flushed into a segment; twice this bounds the operation-log entries a crash leaves to replay (writes wait for a flush beyond it)', SHARDS),
  setting('scriptCacheEntriesMax', integer(1, 1_000_000), SCRIPT_DEFAULTS.cacheEntriesMax, 'compiled Lua scripts a shard node keeps (LRU)', SHARDS),
  setting('scriptCacheTtlMs', integer(0, 2 ** 31), SCRIPT_DEFAULTS.cacheTtlMs, 'a compiled Lua script is compiled again after this long, ms; 0: never', SHARDS),
  setting('scriptInstructionsMax', integer(1000, 2 ** 40), SCRIPT_DEFAULTS.instructionsMax, 'Lua instructions one script run may execute (400 beyond)', SHARDS),
  setting('scriptMemoryBytesMax', integer(1 << 20, 2 ** 31), SCRIPT_DEFAULTS.memoryBytesMax, 'memory one script run may allocate, bytes (400 beyond)', SHARDS),
  setting('scriptTimeoutMs', integer(1, 2 ** 31), SCRIPT_DEFAULTS.timeMsMax, 'time one script run may take, ms (400 beyond): the backstop for work inside Lua library calls', SHARDS),
  setting('shardWorkers', { type: 'integer', min: 0, max: SHARD_WORKERS_MAX, word: 'auto' }, SERVE_DEFAULTS.shardWorkers, `worker threads serving the embedded node's shard copies, each copy always by the same one, while the coordinator (HTTP, routing, merging) keeps the main thread (docs/operations.md, "Shard workers"); 0: all on the main thread (cached GETs answered without a thread hop; the default until measured on a machine with many cores); auto: one per core up to the default number of shards, 0 on a machine of fewer than ${SHARD_WORKERS_AUTO_CORES_MIN} cores`, ['serve']),
  setting('shutdownGraceMs', integer(0, 2 ** 31), SERVE_DEFAULTS.shutdownGraceMs, 'time in-flight requests (on a node: calls) get on SIGTERM, ms', ALL),
  setting('slowRequestMs', integer(0, 2 ** 31), SERVE_DEFAULTS.slowRequestMs, 'requests slower than this are logged at warn, ms', HTTP),
  setting('nodeLeftDelayMs', integer(0, 2 ** 31 - 1), SERVE_DEFAULTS.nodeLeftDelayMs, 'a node lost this long has its shard copies re-allocated to other active nodes, ms (Elasticsearch\'s `node_left.delayed_timeout`); 0: at once', HTTP),
  setting('nodeLeaseMs', integer(1000, 60_000), NODE_DEFAULTS.nodeLeaseMs, 'with --etcd: the node registers under an etcd lease this long (whole seconds), kept alive three times per period, ms; a node that dies or loses etcd is lost within it, whichever coordinators it joined', ['node']),
  setting('primaryLeaseMs', integer(100, PRIMARY_LEASE_MS_MAX), NODE_DEFAULTS.primaryLeaseMs, 'writes as primary are refused (503 `primary_lease_expired`) once the coordinator has not been heard for this long, ms; at most the coordinator\'s 5 s heartbeat timeout less one heartbeat', ['node']),
];

/** The settings of one command, in table order. */
export function settingsOf(command: CommandName): Setting[] {
  return SETTINGS.filter((s) => s.commands.includes(command));
}

/** A setting's default for a command; null when the command needs a value. */
export function defaultOf(s: Setting, command: CommandName): number | string | boolean | null {
  const specific = s.defaults?.[command];
  return specific === undefined ? s.default : specific;
}

/**
 * Config-file keys that are not settings: structured values with no flag or
 * variable, absent from the config unless the file gives them.
 */
const FILE_ONLY_KEYS: ReadonlyMap<string, readonly CommandName[]> = new Map([['templates', HTTP]]);

/** `--config FILE` / this variable: the config file. */
export const CONFIG_FILE_ENV = 'TESSERA_CONFIG';

const BY_KEY = new Map<string, Setting>(SETTINGS.map((s) => [s.key, s]));
const BY_FLAG = new Map<string, Setting>(SETTINGS.map((s) => [s.flag, s]));
/** Variables of the other commands (TESSERA_URL: import and dump) are not typos either. */
const KNOWN_ENV = new Set([...SETTINGS.map((s) => s.env), CONFIG_FILE_ENV, 'TESSERA_URL']);

/** A configuration that cannot be used: every problem found, one per line. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
  }
}

export type ConfigSource = 'flag' | 'env' | 'file' | 'default';

export interface ConfigFile {
  path: string;
  values: Record<string, unknown>;
}

export interface ResolvedConfig<C extends CommandName = 'serve'> {
  config: CommandConfigs[C];
  /** Where each setting's value came from. */
  sources: Partial<Record<ConfigKey, ConfigSource>>;
  /** The config file, absolute, when one was read. */
  file: string | undefined;
}

/** Read and parse a config file (by extension). Throws ConfigError naming the file. */
export async function loadConfigFile(path: string): Promise<ConfigFile> {
  const absolute = resolve(path);
  const extension = extname(absolute).toLowerCase();
  if (!['.json', '.json5', '.yaml', '.yml'].includes(extension)) {
    throw new ConfigError([`${path}: unknown config file type '${extension}': use .json, .json5 (JSON5), .yaml or .yml (YAML)`]);
  }
  let text: string;
  try {
    text = await readFile(absolute, 'utf8');
  } catch (err) {
    throw new ConfigError([`${path}: cannot read the config file: ${(err as Error).message}`]);
  }
  let parsed: unknown;
  try {
    parsed = extension === '.yaml' || extension === '.yml' ? parseYaml(text) : JSON5.parse(text);
  } catch (err) {
    throw new ConfigError([`${path}: ${(err as Error).message.split('\n')[0]}`]);
  }
  // An empty YAML file (or one of only comments) sets nothing.
  if (parsed === null || parsed === undefined) return { path: absolute, values: {} };
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError([`${path}: expected a mapping of settings (key: value) at the top level`]);
  }
  return { path: absolute, values: parsed as Record<string, unknown> };
}

/**
 * The effective configuration of a command (default `serve`): for each of
 * its settings the flag, else its environment variable, else the config
 * file, else the default. Flags come validated by commander; everything else
 * is validated here. A config-file key of another command's setting is a
 * problem too (it would silently do nothing).
 */
export function resolveConfig<C extends CommandName = 'serve'>(input: {
  command?: C;
  flags: Partial<Record<ConfigKey, unknown>>;
  env: NodeJS.ProcessEnv;
  file?: ConfigFile | undefined;
}): ResolvedConfig<C> {
  const command: CommandName = input.command ?? 'serve';
  const problems: string[] = [];
  const fromFile = input.file === undefined ? new Map<ConfigKey, unknown>() : fileValues(input.file, command, problems);
  const config: Record<string, unknown> = {};
  const sources: Partial<Record<ConfigKey, ConfigSource>> = {};
  for (const s of settingsOf(command)) {
    const flag = input.flags[s.key];
    const raw = input.env[s.env];
    const fallback = defaultOf(s, command);
    if (flag !== undefined) {
      config[s.key] = flag;
      sources[s.key] = 'flag';
      const secret = s.kind.type === 'secret' ? parseText(s, String(flag)) : undefined;
      if (secret?.ok === false) problems.push(`--${s.flag}: ${secret.expected}`);
    } else if (raw !== undefined && raw !== '') {
      const parsed = parseText(s, raw);
      if (parsed.ok) config[s.key] = parsed.value;
      else problems.push(`${s.env}=${s.kind.type === 'secret' ? '…' : raw}: ${parsed.expected}`);
      sources[s.key] = 'env';
    } else if (fromFile.has(s.key)) {
      config[s.key] = fromFile.get(s.key);
      sources[s.key] = 'file';
    } else if (fallback === null) {
      problems.push(`tessera ${command} needs a ${s.key}: --${s.flag}, ${s.env} or '${s.key}' in the config file`);
    } else {
      config[s.key] = fallback;
      sources[s.key] = 'default';
    }
  }
  const templates = input.file === undefined ? undefined : fileTemplates(input.file, command, problems);
  if (templates !== undefined) config.templates = templates;
  if (problems.length === 0 && typeof config.urlBytesMax === 'number' && (config.urlBytesMax as number) > (config.headerBytesMax as number)) {
    problems.push(`urlBytesMax (${String(config.urlBytesMax)}, from ${sources.urlBytesMax}) must not exceed headerBytesMax (${String(config.headerBytesMax)}, from ${sources.headerBytesMax}): the request-target is part of the head`);
  }
  if (problems.length === 0 && typeof config.bodiesBytesMax === 'number') {
    for (const key of ['bodyBytesMax', 'contentBodyBytesMax'] as const) {
      if ((config[key] as number) > (config.bodiesBytesMax as number)) {
        problems.push(`${key} (${String(config[key])}, from ${sources[key]}) must not exceed bodiesBytesMax (${String(config.bodiesBytesMax)}, from ${sources.bodiesBytesMax}): such a body could never be taken`);
      }
    }
  }
  if (problems.length === 0) problems.push(...tlsAndCorsProblems(config));
  if (problems.length > 0) throw new ConfigError(problems);
  return { config: config as unknown as CommandConfigs[C], sources, file: input.file?.path };
}

/** The TLS pair is given whole or not at all; CORS origins are origins. */
function tlsAndCorsProblems(config: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if (typeof config.tlsCert === 'string' && (config.tlsCert === '') !== (config.tlsKey === '')) problems.push(TLS_PAIR_PROBLEM);
  if (typeof config.corsOrigin === 'string') {
    try {
      parseCorsOrigins(config.corsOrigin);
    } catch (err) {
      problems.push(`corsOrigin: ${(err as Error).message}`);
    }
  }
  return problems;
}

/** What is shown of a redacted secret. */
export const REDACTED = '<redacted>';

/** The configuration as it may be logged or printed: secrets given are replaced by REDACTED. */
export function redactSecrets<T extends object>(config: T): T {
  const out = { ...config } as Record<string, unknown>;
  for (const s of SETTINGS) if (s.kind.type === 'secret' && typeof out[s.key] === 'string' && out[s.key] !== '') out[s.key] = REDACTED;
  return out as T;
}

/** `TESSERA_*` variables that name no setting (likely typos), sorted. */
export function unknownEnvironment(env: NodeJS.ProcessEnv): string[] {
  return Object.keys(env).filter((name) => name.startsWith('TESSERA_') && !KNOWN_ENV.has(name)).sort();
}

/** The options `serve()` takes. */
export function serveOptionsOf(config: ServeConfig): ServeOptions {
  return {
    ...SERVE_DEFAULTS,
    ...httpOptionsOf(config),
    nodeName: config.name,
    shardWorkers: config.shardWorkers,
    logPretty: config.logPretty,
    documentCacheBytesMax: config.documentCacheBytesMax,
    storeWriteBufferBytes: config.storeWriteBufferBytes,
    storeMemoryBytesMax: config.storeMemoryBytesMax,
    contentVolumeBytesMax: config.contentVolumeBytesMax,
    writeBufferBytesMax: config.writeBufferBytes,
    writeBufferOpsMax: config.writeBufferOps,
    scripts: scriptOptionsOf(config),
  };
}

/** The options `runCoordinator()` takes. */
export function coordinatorOptionsOf(config: CoordinatorConfig): CoordinatorProcessOptions {
  return {
    ...httpOptionsOf(config), name: config.name, rpcHost: config.rpcHost, rpcPort: config.rpcPort,
    etcd: splitList(config.etcd), etcdPrefix: config.etcdPrefix, coordinatorLeaseMs: config.coordinatorLeaseMs,
    tlsCa: config.tlsCa, clusterSecret: config.clusterSecret,
  };
}

/** The options `runNode()` takes. */
export function nodeOptionsOf(config: NodeConfig): NodeProcessOptions {
  return {
    join: splitList(config.join),
    name: config.name,
    dataDir: config.data,
    documentCacheBytesMax: config.documentCacheBytesMax,
    storeWriteBufferBytes: config.storeWriteBufferBytes,
    storeMemoryBytesMax: config.storeMemoryBytesMax,
    contentVolumeBytesMax: config.contentVolumeBytesMax,
    writeBufferBytesMax: config.writeBufferBytes,
    writeBufferOpsMax: config.writeBufferOps,
    shutdownGraceMs: config.shutdownGraceMs,
    primaryLeaseMs: config.primaryLeaseMs,
    etcd: splitList(config.etcd),
    etcdPrefix: config.etcdPrefix,
    nodeLeaseMs: config.nodeLeaseMs,
    relayHost: config.relayHost,
    relayPort: config.relayPort === 'off' ? undefined : config.relayPort,
    scripts: scriptOptionsOf(config),
    tlsCert: config.tlsCert,
    tlsKey: config.tlsKey,
    tlsCa: config.tlsCa,
    clusterSecret: config.clusterSecret,
  };
}

function scriptOptionsOf(config: Pick<ServeConfig, ScriptSettingKey>): ScriptRunnerOptions {
  return {
    cacheEntriesMax: config.scriptCacheEntriesMax,
    cacheTtlMs: config.scriptCacheTtlMs,
    instructionsMax: config.scriptInstructionsMax,
    memoryBytesMax: config.scriptMemoryBytesMax,
    timeMsMax: config.scriptTimeoutMs,
  };
}

/** What serve and coordinator share: the HTTP API and its limits. */
function httpOptionsOf(config: CoordinatorConfig | ServeConfig) {
  return {
    port: config.port,
    host: config.host,
    dataDir: config.data,
    clusterName: SERVE_DEFAULTS.clusterName,
    numberOfShards: config.shards,
    numberOfReplicas: config.replicas,
    bodyBytesMax: config.bodyBytesMax,
    restoreBodyBytesMax: config.restoreBodyBytesMax,
    contentBodyBytesMax: config.contentBodyBytesMax,
    yamlBodyBytesMax: config.yamlBodyBytesMax,
    bodiesBytesMax: config.bodiesBytesMax,
    headerBytesMax: config.headerBytesMax,
    urlBytesMax: config.urlBytesMax,
    headersTimeoutMs: config.headersTimeoutMs,
    bodyTimeoutMs: config.bodyTimeoutMs,
    idleTimeoutMs: config.idleTimeoutMs,
    depthMax: config.depthMax,
    fieldsMax: config.fieldsMax,
    valuesPerFieldMax: config.valuesPerFieldMax,
    documentValuesMax: config.documentValuesMax,
    stringBytesMax: config.stringBytesMax,
    documentWordsMax: config.documentWordsMax,
    strict: config.strict,
    ...(config.templates === undefined ? {} : { templates: config.templates }),
    ...(config.apiKey === '' ? {} : { apiKey: config.apiKey }),
    shutdownGraceMs: config.shutdownGraceMs,
    slowRequestMs: config.slowRequestMs,
    nodeLeftDelayMs: config.nodeLeftDelayMs,
    tlsCert: config.tlsCert,
    tlsKey: config.tlsKey,
    corsOrigin: config.corsOrigin,
  };
}

type Checked = { ok: true; value: number | string | boolean } | { ok: false; expected: string };

/** A flag's or variable's text as the setting's value, or what was expected instead. */
export function parseText(s: Setting, text: string): Checked {
  const kind = s.kind;
  let ok: boolean;
  switch (kind.type) {
    case 'integer': {
      if (kind.word !== undefined && text === kind.word) return { ok: true, value: text };
      const n = Number(text);
      ok = /^\d+$/.test(text) && n >= kind.min && n <= kind.max;
      return ok ? { ok: true, value: n } : { ok: false, expected: expectation(kind) };
    }
    case 'enum': ok = kind.values.includes(text); break;
    case 'string': case 'path': ok = text.length > 0; break;
    case 'name': ok = NODE_NAME.test(text); break;
    case 'secret': ok = SECRET.test(text); break;
    case 'url': ok = isUrl(text, kind); break;
    case 'boolean': {
      const value = BOOLEAN_TEXT.get(text.toLowerCase());
      return value === undefined ? { ok: false, expected: expectation(kind) } : { ok: true, value };
    }
  }
  return ok ? { ok: true, value: text } : { ok: false, expected: expectation(kind) };
}

/** Node names: safe as a directory name, readable in logs and `/.nodes`. */
const NODE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** A secret: what a client can send in a header as is. */
const SECRET = /^[\x21-\x7e]{16,1024}$/;

/** What a variable may say for a boolean setting. */
const BOOLEAN_TEXT = new Map([['true', true], ['1', true], ['yes', true], ['false', false], ['0', false], ['no', false]]);

function isUrl(text: string, kind: Extract<Kind, { type: 'url' }>): boolean {
  const one = (url: string): boolean => URL.canParse(url) && kind.protocols.includes(new URL(url).protocol);
  return kind.list === true ? splitList(text).length > 0 && splitList(text).every(one) : one(text);
}

/** The items of a comma-separated setting, trimmed, empty ones dropped. */
export function splitList(text: string): string[] {
  return text.split(',').map((item) => item.trim()).filter((item) => item.length > 0);
}

function expectation(kind: Kind): string {
  switch (kind.type) {
    case 'integer': return `expected an integer from ${kind.min} to ${kind.max}${kind.word === undefined ? '' : ` or ${kind.word}`}`;
    case 'enum': return `expected one of ${kind.values.join(', ')}`;
    case 'string': return 'expected a non-empty string';
    case 'path': return 'expected a non-empty path';
    case 'name': return 'expected a name of 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit';
    case 'url': return `expected ${kind.list === true ? 'one or more URLs separated by commas' : 'a URL'} (${kind.protocols.map((p) => `${p}//host:port`).join(' or ')})`;
    case 'boolean': return 'expected true or false';
    case 'secret': return 'expected 16 to 1024 visible ASCII characters (no spaces), such as the output of `openssl rand -hex 32`';
  }
}

/** The file's settings by key, validated; problems name the file and the key as written. */
function fileValues(file: ConfigFile, command: CommandName, problems: string[]): Map<ConfigKey, unknown> {
  const out = new Map<ConfigKey, unknown>();
  const writtenAs = new Map<ConfigKey, string>();
  for (const [written, value] of Object.entries(file.values)) {
    if (FILE_ONLY_KEYS.has(written)) continue;
    const s = BY_KEY.get(written) ?? BY_FLAG.get(written);
    if (s === undefined) {
      const hint = closestKey(written);
      problems.push(`${file.path}: unknown key '${written}'${hint === undefined ? '' : ` (did you mean '${hint}'?)`}`);
      continue;
    }
    if (!s.commands.includes(command)) {
      problems.push(`${file.path}: '${written}' is a setting of ${s.commands.map((c) => `tessera ${c}`).join(' and ')}, not of tessera ${command}`);
      continue;
    }
    const earlier = writtenAs.get(s.key);
    if (earlier !== undefined) {
      problems.push(`${file.path}: '${earlier}' and '${written}' set the same setting`);
      continue;
    }
    writtenAs.set(s.key, written);
    const checked = checkFileValue(s, value, file.path);
    if (checked.ok) out.set(s.key, checked.value);
    else problems.push(`${file.path}: '${written}': ${checked.expected}, got ${s.kind.type === 'secret' ? `a ${typeof value}` : describeValue(value)}`);
  }
  return out;
}

/** `templates:` of the file (API.md §16.1): a mapping of name → template, each validated as `PUT /.templates/<name>` would. */
function fileTemplates(file: ConfigFile, command: CommandName, problems: string[]): Record<string, unknown> | undefined {
  const value = file.values.templates;
  if (value === undefined) return undefined;
  if (!(FILE_ONLY_KEYS.get('templates') as readonly CommandName[]).includes(command)) {
    problems.push(`${file.path}: 'templates' is a setting of tessera serve and tessera coordinator, not of tessera ${command}`);
    return undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    problems.push(`${file.path}: 'templates': expected a mapping of template name to template, got ${describeValue(value)}`);
    return undefined;
  }
  for (const [name, template] of Object.entries(value)) {
    try {
      parseTemplate(name, template);
    } catch (err) {
      problems.push(`${file.path}: 'templates': ${(err as Error).message}`);
    }
  }
  return value as Record<string, unknown>;
}

/** A file's value: JSON5 and YAML have typed values, so an integer must be a number, not a numeric string. */
function checkFileValue(s: Setting, value: unknown, filePath: string): Checked {
  const kind = s.kind;
  let ok: boolean;
  switch (kind.type) {
    case 'integer':
      ok = (typeof value === 'number' && Number.isInteger(value) && value >= kind.min && value <= kind.max) || (kind.word !== undefined && value === kind.word);
      break;
    case 'enum':
      ok = typeof value === 'string' && kind.values.includes(value);
      break;
    case 'string':
      ok = typeof value === 'string' && value.length > 0;
      break;
    case 'name':
      ok = typeof value === 'string' && NODE_NAME.test(value);
      break;
    case 'secret':
      ok = typeof value === 'string' && SECRET.test(value);
      break;
    case 'url':
      ok = typeof value === 'string' && isUrl(value, kind);
      break;
    case 'boolean':
      ok = typeof value === 'boolean';
      break;
    case 'path':
      // Relative to the file, so a config file and its data directory can move together.
      if (typeof value === 'string' && value.length > 0) return { ok: true, value: resolve(dirname(filePath), value) };
      ok = false;
      break;
  }
  return ok ? { ok: true, value: value as number | string | boolean } : { ok: false, expected: expectation(kind) };
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `${typeof value} ${JSON.stringify(value)}`;
}

/** The setting key nearest to a mistyped one (edit distance ≤ 3, in either spelling). */
function closestKey(written: string): string | undefined {
  let best: string | undefined;
  let bestDistance = 4;
  for (const s of SETTINGS) {
    const d = Math.min(editDistance(written.toLowerCase(), s.key.toLowerCase()), editDistance(written.toLowerCase(), s.flag));
    if (d < bestDistance) {
      best = s.key;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/**
 * The reference table of docs/operations.md (between its `config-reference`
 * markers; a test keeps the two equal).
 */
export function configReference(): string {
  const rows = SETTINGS.map((s) => {
    const flag = `${s.short === undefined ? '' : `\`-${s.short}\`, `}\`--${s.flag}\``;
    const values = s.kind.type === 'integer' ? `integer ${s.kind.min}–${s.kind.max}${s.kind.word === undefined ? '' : `, ${s.kind.word}`}`
      : s.kind.type === 'enum' ? s.kind.values.join(', ')
        : s.kind.type === 'url' ? s.kind.protocols.map((p) => `${p}//…`).join(' ')
          : s.kind.type === 'path' && s.kind.file === true ? 'file' : s.kind.type;
    const commands = s.commands.length === COMMANDS.length ? 'all' : s.commands.join(', ');
    return `| \`${s.key}\` | ${flag} | \`${s.env}\` | ${commands} | ${values} | ${defaultText(s)} | ${s.description} |`;
  });
  return [
    '| key | flag | environment | commands | values | default | meaning |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

function defaultText(s: Setting): string {
  const special = Object.entries(s.defaults ?? {}).map(([command, value]) =>
    `${command}: ${value === null ? 'required' : `\`${String(value)}\``}`);
  const base = bytesText(s);
  return special.length === 0 ? base : `${base} (${special.join('; ')})`;
}

function bytesText(s: Setting): string {
  const value = `\`${String(s.default)}\``;
  if (typeof s.default !== 'number' || !s.key.endsWith('BytesMax') || s.default < 1024) return value;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let n = s.default / 1024;
  let unit = 0;
  while (n >= 1024 && unit < units.length - 1) {
    n /= 1024;
    unit++;
  }
  return `${value} (${Number.isInteger(n) ? n : n.toFixed(1)} ${units[unit] as string})`;
}
