/**
 * The `tessera` command line. `serve` runs the embedded server; later
 * commands (coordinator, node, cluster, import) slot in beside it.
 */
import { Command, InvalidArgumentError } from 'commander';
import { pino } from 'pino';
import { DEFAULT_NODE_NAME, serve, SERVE_DEFAULTS, type ServeOptions } from './serve.js';
import { TESSERA_VERSION } from './version.js';

function integer(min: number, max: number) {
  return (value: string): number => {
    if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
    return n;
  };
}

function envInteger(name: string, min: number, max: number): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  try {
    return integer(min, max)(raw);
  } catch (err) {
    process.stderr.write(`tessera: invalid ${name}=${raw}: ${(err as Error).message}\n`);
    process.exit(2);
  }
}

/** Numeric limits of `serve`: flag, option key, bounds, meaning (each also TESSERA_<KEY> in the environment). */
const LIMIT_FLAGS: Array<[string, keyof ServeOptions, number, number, string]> = [
  ['body-bytes-max', 'bodyBytesMax', 0, 2 ** 40, 'largest request body, bytes (413 beyond)'],
  ['restore-body-bytes-max', 'restoreBodyBytesMax', 0, 2 ** 50, 'largest RESTORE body, bytes, streamed (413 beyond)'],
  ['header-bytes-max', 'headerBytesMax', 256, 1 << 24, 'largest request line + header section, bytes (431 beyond)'],
  ['url-bytes-max', 'urlBytesMax', 16, 1 << 24, 'longest request-target, bytes (414 beyond)'],
  ['headers-timeout-ms', 'headersTimeoutMs', 1, 2 ** 31, 'time to receive a request head (408 beyond)'],
  ['body-timeout-ms', 'bodyTimeoutMs', 1, 2 ** 31, 'longest silence while a body is read (408 beyond)'],
  ['idle-timeout-ms', 'idleTimeoutMs', 1, 2 ** 31, 'idle keep-alive connection lifetime'],
  ['depth-max', 'depthMax', 1, 100_000, 'deepest nesting of a body (400 beyond)'],
  ['fields-max', 'fieldsMax', 1, 10_000_000, 'most object keys in one body (400 beyond)'],
  ['document-cache-bytes-max', 'documentCacheBytesMax', 0, 2 ** 40, 'decoded-document cache per shard, bytes'],
  ['shutdown-grace-ms', 'shutdownGraceMs', 0, 2 ** 31, 'time in-flight requests get on SIGTERM'],
  ['slow-request-ms', 'slowRequestMs', 0, 2 ** 31, 'requests slower than this are logged at warn'],
];

function envName(flag: string): string {
  return `TESSERA_${flag.toUpperCase().replace(/-/g, '_')}`;
}

const program = new Command('tessera')
  .description('Tessera: distributed document index, content store and search server')
  .version(TESSERA_VERSION);

const serveCommand = program
  .command('serve')
  .description('run the embedded server (coordinator and shard node in one process)')
  .option('-p, --port <port>', `HTTP port (env TESSERA_PORT, default ${SERVE_DEFAULTS.port}; 0 picks a free one)`, integer(0, 65535))
  .option('--host <host>', `address to listen on (env TESSERA_HOST, default ${SERVE_DEFAULTS.host})`)
  .option('-d, --data <dir>', `data directory (env TESSERA_DATA, default ${SERVE_DEFAULTS.dataDir})`)
  .option('--name <name>', `node name (env TESSERA_NODE_NAME, default ${DEFAULT_NODE_NAME})`)
  .option('--shards <n>', `default number_of_shards of new indexes (default ${SERVE_DEFAULTS.numberOfShards})`, integer(1, 9999))
  .option('--log-level <level>', 'fatal, error, warn, info, debug or trace (env TESSERA_LOG_LEVEL, default info)');
for (const [flag, key, min, max, meaning] of LIMIT_FLAGS) {
  serveCommand.option(`--${flag} <n>`, `${meaning} (env ${envName(flag)}, default ${String(SERVE_DEFAULTS[key as keyof typeof SERVE_DEFAULTS])})`, integer(min, max));
}
serveCommand
  .action(async (flags: { port?: number; host?: string; data?: string; name?: string; shards?: number; logLevel?: string } & Record<string, unknown>) => {
    const log = pino({ level: flags.logLevel ?? process.env.TESSERA_LOG_LEVEL ?? 'info', base: { pid: process.pid } });
    const options: ServeOptions = {
      ...SERVE_DEFAULTS,
      port: flags.port ?? envInteger('TESSERA_PORT', 0, 65535) ?? SERVE_DEFAULTS.port,
      host: flags.host ?? process.env.TESSERA_HOST ?? SERVE_DEFAULTS.host,
      dataDir: flags.data ?? process.env.TESSERA_DATA ?? SERVE_DEFAULTS.dataDir,
      nodeName: flags.name ?? process.env.TESSERA_NODE_NAME ?? DEFAULT_NODE_NAME,
      numberOfShards: flags.shards ?? SERVE_DEFAULTS.numberOfShards,
    };
    for (const [flag, key, min, max] of LIMIT_FLAGS) {
      const camel = flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
      const value = (flags[camel] as number | undefined) ?? envInteger(envName(flag), min, max);
      if (value !== undefined) (options as unknown as Record<string, unknown>)[key] = value;
    }
    log.info({ options }, 'starting');
    let server: Awaited<ReturnType<typeof serve>>;
    try {
      server = await serve(options, log);
    } catch (err) {
      log.fatal({ err }, 'could not start');
      process.exit(1);
    }
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'shutting down');
      server.close().then(
        () => { log.info('stopped'); process.exit(0); },
        (err: unknown) => { log.error({ err }, 'shutdown failed'); process.exit(1); },
      );
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`tessera: ${(err as Error).message}\n`);
  process.exit(1);
});
