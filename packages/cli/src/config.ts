/**
 * Configuration of `tessera serve`: one table of settings (SETTINGS) from
 * which the command-line flags, the `TESSERA_*` environment variables, the
 * config-file keys, their validation and the reference table of
 * docs/operations.md are all derived, so none of them can drift from the
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
import { DEFAULT_NODE_NAME, SERVE_DEFAULTS, type ServeOptions } from './serve.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Every setting of `tessera serve`, under its config-file key (the flag name in camelCase). */
export interface ServeConfig {
  port: number;
  host: string;
  data: string;
  name: string;
  shards: number;
  logLevel: LogLevel;
  bodyBytesMax: number;
  restoreBodyBytesMax: number;
  headerBytesMax: number;
  urlBytesMax: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  idleTimeoutMs: number;
  depthMax: number;
  fieldsMax: number;
  documentCacheBytesMax: number;
  shutdownGraceMs: number;
  slowRequestMs: number;
}

export type ConfigKey = keyof ServeConfig;

type Kind =
  | { type: 'integer'; min: number; max: number }
  | { type: 'string' }
  /** A directory; relative paths in a config file are taken from the file's directory. */
  | { type: 'path' }
  | { type: 'enum'; values: readonly string[] };

export interface Setting {
  key: ConfigKey;
  /** The long flag without dashes: the key in kebab-case. */
  flag: string;
  short?: string;
  env: string;
  kind: Kind;
  default: number | string;
  description: string;
}

const integer = (min: number, max: number): Kind => ({ type: 'integer', min, max });

function setting(key: ConfigKey, kind: Kind, defaultValue: number | string, description: string,
  extra: { short?: string; env?: string } = {}): Setting {
  const flag = key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  return { key, flag, env: extra.env ?? `TESSERA_${flag.toUpperCase().replace(/-/g, '_')}`, kind, default: defaultValue, description, ...(extra.short === undefined ? {} : { short: extra.short }) };
}

export const SETTINGS: readonly Setting[] = [
  setting('port', integer(0, 65535), SERVE_DEFAULTS.port, 'HTTP port; 0 picks a free one', { short: 'p' }),
  setting('host', { type: 'string' }, SERVE_DEFAULTS.host, 'address to listen on'),
  setting('data', { type: 'path' }, SERVE_DEFAULTS.dataDir, 'data directory (created if missing)', { short: 'd' }),
  setting('name', { type: 'string' }, DEFAULT_NODE_NAME, 'node name (shard copies are allocated to it: keep it across restarts)', { env: 'TESSERA_NODE_NAME' }),
  setting('shards', integer(1, 9999), SERVE_DEFAULTS.numberOfShards, 'default number_of_shards of new indexes'),
  setting('logLevel', { type: 'enum', values: LOG_LEVELS }, 'info', 'log level'),
  setting('bodyBytesMax', integer(0, 2 ** 40), SERVE_DEFAULTS.bodyBytesMax, 'largest request body, bytes (413 beyond); also the largest RESTORE item'),
  setting('restoreBodyBytesMax', integer(0, 2 ** 50), SERVE_DEFAULTS.restoreBodyBytesMax, 'largest RESTORE body, bytes, streamed (413 beyond)'),
  setting('headerBytesMax', integer(256, 1 << 24), SERVE_DEFAULTS.headerBytesMax, 'largest request line + header section, bytes (431 beyond)'),
  setting('urlBytesMax', integer(16, 1 << 24), SERVE_DEFAULTS.urlBytesMax, 'longest request-target, bytes (414 beyond); at most headerBytesMax'),
  setting('headersTimeoutMs', integer(1, 2 ** 31), SERVE_DEFAULTS.headersTimeoutMs, 'time to receive a request head, ms (408 beyond)'),
  setting('bodyTimeoutMs', integer(1, 2 ** 31), SERVE_DEFAULTS.bodyTimeoutMs, 'longest silence while a body is read, ms (408 beyond)'),
  setting('idleTimeoutMs', integer(1, 2 ** 31), SERVE_DEFAULTS.idleTimeoutMs, 'idle keep-alive connection lifetime, ms; also how long a client may stop reading a response'),
  setting('depthMax', integer(1, 100_000), SERVE_DEFAULTS.depthMax, 'deepest nesting of a body (400 beyond)'),
  setting('fieldsMax', integer(1, 10_000_000), SERVE_DEFAULTS.fieldsMax, 'most object keys in one body (400 beyond)'),
  setting('documentCacheBytesMax', integer(0, 2 ** 40), SERVE_DEFAULTS.documentCacheBytesMax, 'decoded-document cache per shard, bytes; 0 disables it'),
  setting('shutdownGraceMs', integer(0, 2 ** 31), SERVE_DEFAULTS.shutdownGraceMs, 'time in-flight requests get on SIGTERM, ms'),
  setting('slowRequestMs', integer(0, 2 ** 31), SERVE_DEFAULTS.slowRequestMs, 'requests slower than this are logged at warn, ms'),
];

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

export interface ResolvedConfig {
  config: ServeConfig;
  /** Where each setting's value came from. */
  sources: Record<ConfigKey, ConfigSource>;
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
 * The effective configuration: for each setting the flag, else its
 * environment variable, else the config file, else the default. Flags come
 * validated by commander; everything else is validated here.
 */
export function resolveConfig(input: {
  flags: Partial<Record<ConfigKey, unknown>>;
  env: NodeJS.ProcessEnv;
  file?: ConfigFile | undefined;
}): ResolvedConfig {
  const problems: string[] = [];
  const fromFile = input.file === undefined ? new Map<ConfigKey, unknown>() : fileValues(input.file, problems);
  const config: Record<string, unknown> = {};
  const sources = {} as Record<ConfigKey, ConfigSource>;
  for (const s of SETTINGS) {
    const flag = input.flags[s.key];
    const raw = input.env[s.env];
    if (flag !== undefined) {
      config[s.key] = flag;
      sources[s.key] = 'flag';
    } else if (raw !== undefined && raw !== '') {
      const parsed = parseText(s, raw);
      if (parsed.ok) config[s.key] = parsed.value;
      else problems.push(`${s.env}=${raw}: ${parsed.expected}`);
      sources[s.key] = 'env';
    } else if (fromFile.has(s.key)) {
      config[s.key] = fromFile.get(s.key);
      sources[s.key] = 'file';
    } else {
      config[s.key] = s.default;
      sources[s.key] = 'default';
    }
  }
  if (problems.length === 0 && (config.urlBytesMax as number) > (config.headerBytesMax as number)) {
    problems.push(`urlBytesMax (${String(config.urlBytesMax)}, from ${sources.urlBytesMax}) must not exceed headerBytesMax (${String(config.headerBytesMax)}, from ${sources.headerBytesMax}): the request-target is part of the head`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { config: config as unknown as ServeConfig, sources, file: input.file?.path };
}

/** `TESSERA_*` variables that name no setting (likely typos), sorted. */
export function unknownEnvironment(env: NodeJS.ProcessEnv): string[] {
  return Object.keys(env).filter((name) => name.startsWith('TESSERA_') && !KNOWN_ENV.has(name)).sort();
}

/** The options `serve()` takes. */
export function serveOptionsOf(config: ServeConfig): ServeOptions {
  return {
    ...SERVE_DEFAULTS,
    port: config.port,
    host: config.host,
    dataDir: config.data,
    nodeName: config.name,
    numberOfShards: config.shards,
    bodyBytesMax: config.bodyBytesMax,
    restoreBodyBytesMax: config.restoreBodyBytesMax,
    headerBytesMax: config.headerBytesMax,
    urlBytesMax: config.urlBytesMax,
    headersTimeoutMs: config.headersTimeoutMs,
    bodyTimeoutMs: config.bodyTimeoutMs,
    idleTimeoutMs: config.idleTimeoutMs,
    depthMax: config.depthMax,
    fieldsMax: config.fieldsMax,
    documentCacheBytesMax: config.documentCacheBytesMax,
    shutdownGraceMs: config.shutdownGraceMs,
    slowRequestMs: config.slowRequestMs,
  };
}

type Checked = { ok: true; value: number | string } | { ok: false; expected: string };

/** A flag's or variable's text as the setting's value, or what was expected instead. */
export function parseText(s: Setting, text: string): Checked {
  const kind = s.kind;
  let ok: boolean;
  switch (kind.type) {
    case 'integer': {
      const n = Number(text);
      ok = /^\d+$/.test(text) && n >= kind.min && n <= kind.max;
      return ok ? { ok: true, value: n } : { ok: false, expected: expectation(kind) };
    }
    case 'enum': ok = kind.values.includes(text); break;
    case 'string': case 'path': ok = text.length > 0; break;
  }
  return ok ? { ok: true, value: text } : { ok: false, expected: expectation(kind) };
}

function expectation(kind: Kind): string {
  switch (kind.type) {
    case 'integer': return `expected an integer from ${kind.min} to ${kind.max}`;
    case 'enum': return `expected one of ${kind.values.join(', ')}`;
    case 'string': return 'expected a non-empty string';
    case 'path': return 'expected a non-empty path';
  }
}

/** The file's settings by key, validated; problems name the file and the key as written. */
function fileValues(file: ConfigFile, problems: string[]): Map<ConfigKey, unknown> {
  const out = new Map<ConfigKey, unknown>();
  const writtenAs = new Map<ConfigKey, string>();
  for (const [written, value] of Object.entries(file.values)) {
    const s = BY_KEY.get(written) ?? BY_FLAG.get(written);
    if (s === undefined) {
      const hint = closestKey(written);
      problems.push(`${file.path}: unknown key '${written}'${hint === undefined ? '' : ` (did you mean '${hint}'?)`}`);
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
    else problems.push(`${file.path}: '${written}': ${checked.expected}, got ${describeValue(value)}`);
  }
  return out;
}

/** A file's value: JSON5 and YAML have typed values, so an integer must be a number, not a numeric string. */
function checkFileValue(s: Setting, value: unknown, filePath: string): Checked {
  const kind = s.kind;
  let ok: boolean;
  switch (kind.type) {
    case 'integer':
      ok = typeof value === 'number' && Number.isInteger(value) && value >= kind.min && value <= kind.max;
      break;
    case 'enum':
      ok = typeof value === 'string' && kind.values.includes(value);
      break;
    case 'string':
      ok = typeof value === 'string' && value.length > 0;
      break;
    case 'path':
      // Relative to the file, so a config file and its data directory can move together.
      if (typeof value === 'string' && value.length > 0) return { ok: true, value: resolve(dirname(filePath), value) };
      ok = false;
      break;
  }
  return ok ? { ok: true, value: value as number | string } : { ok: false, expected: expectation(kind) };
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
    const values = s.kind.type === 'integer' ? `integer ${s.kind.min}–${s.kind.max}`
      : s.kind.type === 'enum' ? s.kind.values.join(', ') : s.kind.type;
    return `| \`${s.key}\` | ${flag} | \`${s.env}\` | ${values} | ${defaultText(s)} | ${s.description} |`;
  });
  return [
    '| key | flag | environment | values | default | meaning |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

function defaultText(s: Setting): string {
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
