/**
 * The `tessera` command line: `serve` runs the embedded server, `import` and
 * `dump` move documents in and out of a running one; the cluster's
 * `coordinator`, `node` and `cluster` commands slot in beside them.
 *
 * Exit codes: 0 done; 1 failed (some documents not imported, server error);
 * 2 usage or configuration error (nothing was done).
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { pino } from 'pino';
import {
  CONFIG_FILE_ENV, ConfigError, loadConfigFile, parseText, resolveConfig, serveOptionsOf, SETTINGS, unknownEnvironment,
  type ConfigKey, type Setting,
} from './config.js';
import { runDump } from './dump.js';
import { DEFAULT_URL, runImport, URL_ENV } from './import.js';
import { serve } from './serve.js';
import { TESSERA_VERSION } from './version.js';

function integer(min: number, max: number) {
  return (value: string): number => {
    if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
    return n;
  };
}

/** A `serve` flag for a setting: validated by the same rule as its variable and config key. */
function settingOption(s: Setting): Option {
  const placeholder = s.kind.type === 'integer' ? '<n>' : s.kind.type === 'path' ? '<dir>' : `<${s.flag.split('-').pop() as string}>`;
  const option = new Option(`${s.short === undefined ? '' : `-${s.short}, `}--${s.flag} ${placeholder}`,
    `${s.description} (config ${s.key}, env ${s.env}, default ${String(s.default)})`);
  if (s.kind.type === 'enum') return option.choices(s.kind.values);
  return option.argParser((text: string) => {
    const checked = parseText(s, text);
    if (!checked.ok) throw new InvalidArgumentError(checked.expected);
    return checked.value;
  });
}

function fail(message: string, code: number): never {
  process.stderr.write(`tessera: ${message}\n`);
  process.exit(code);
}

const program = new Command('tessera')
  .description('Tessera: distributed document index, content store and search server')
  .version(TESSERA_VERSION)
  .showHelpAfterError();

const serveCommand = program
  .command('serve')
  .description('run the embedded server (coordinator and shard node in one process)')
  .option('-c, --config <file>', `config file: JSON5 (.json, .json5) or YAML (.yaml, .yml) (env ${CONFIG_FILE_ENV})`)
  .option('--print-config', 'print the effective configuration as JSON and exit');
for (const s of SETTINGS) serveCommand.addOption(settingOption(s));
serveCommand.addHelpText('after', '\nPrecedence: flag > TESSERA_* environment > config file > default.\n');
serveCommand.action(async (flags: Record<string, unknown>) => {
  const settingFlags: Partial<Record<ConfigKey, unknown>> = {};
  for (const s of SETTINGS) if (flags[s.key] !== undefined) settingFlags[s.key] = flags[s.key];
  let resolved: ReturnType<typeof resolveConfig>;
  try {
    const configEnv = process.env[CONFIG_FILE_ENV];
    const configPath = (flags.config as string | undefined) ?? (configEnv === '' ? undefined : configEnv);
    const file = configPath === undefined ? undefined : await loadConfigFile(configPath);
    resolved = resolveConfig({ flags: settingFlags, env: process.env, file });
  } catch (err) {
    if (err instanceof ConfigError) fail(`invalid configuration:\n  ${err.problems.join('\n  ')}`, 2);
    throw err;
  }
  if (flags.printConfig === true) {
    process.stdout.write(`${JSON.stringify(resolved.config, null, 2)}\n`);
    return;
  }
  const { config, sources } = resolved;
  const log = pino({ level: config.logLevel, base: { pid: process.pid } });
  const unknown = unknownEnvironment(process.env);
  if (unknown.length > 0) log.warn({ variables: unknown }, 'TESSERA_* variables that name no setting are ignored');
  // The effective configuration, once, with where each value came from.
  log.info({ config, sources, configFile: resolved.file }, 'starting');
  let server: Awaited<ReturnType<typeof serve>>;
  try {
    server = await serve(serveOptionsOf(config), log);
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

program
  .command('import')
  .description('load documents into an index of a running server, through RESTORE')
  .argument('<file>', 'NDJSON (.ndjson, gzipped or not: detected), a MessagePack sequence (.msgpack), or - for standard input')
  .requiredOption('-i, --index <path>', 'index to load into, e.g. /debian/ (created if missing)')
  .option('-u, --url <url>', `server URL (env ${URL_ENV}, default ${DEFAULT_URL})`)
  .option('-b, --batch <n>', 'documents per RESTORE request', integer(1, 100_000), 1000)
  .option('--concurrency <n>', 'RESTORE requests in flight at once', integer(1, 64), 2)
  .addOption(new Option('-f, --format <format>', 'input format (default: .msgpack/.mpk files are msgpack, anything else ndjson)').choices(['ndjson', 'msgpack']))
  .option('--progress-interval <seconds>', 'seconds between progress lines when standard error is not a terminal', integer(1, 86_400), 5)
  .option('-q, --quiet', 'no progress bar or progress lines (errors and the summary are still printed)')
  .addHelpText('after', `
Documents with an _id replace the document of that ID, so a killed import can
simply be run again. Documents without one get a generated ID (a rerun adds
them again). Bad lines are reported on standard error as FILE:LINE: message
and do not stop the rest; the exit code is 1 when any line failed.`)
  .action(async (file: string, flags: { index: string; url?: string; batch: number; concurrency: number; format?: 'ndjson' | 'msgpack'; progressInterval: number; quiet?: boolean }) => {
    try {
      const summary = await runImport({
        source: file,
        index: flags.index,
        url: flags.url ?? (process.env[URL_ENV] || DEFAULT_URL),
        batchItems: flags.batch,
        concurrency: flags.concurrency,
        format: flags.format,
        progress: flags.quiet !== true,
        progressIntervalMs: flags.progressInterval * 1000,
      });
      process.exitCode = summary.failed > 0 || summary.aborted !== undefined ? 1 : 0;
    } catch (err) {
      fail((err as Error).message, 2);
    }
  });

program
  .command('dump')
  .description('write every document of an index of a running server as NDJSON (DUMP), ready for `tessera import`')
  .requiredOption('-i, --index <path>', 'index to dump, e.g. /debian/')
  .option('-u, --url <url>', `server URL (env ${URL_ENV}, default ${DEFAULT_URL})`)
  .option('-o, --output <file>', 'file to write (gzipped when it ends in .gz), or - for standard output', '-')
  .action(async (flags: { index: string; url?: string; output: string }) => {
    try {
      await runDump({ index: flags.index, url: flags.url ?? (process.env[URL_ENV] || DEFAULT_URL), output: flags.output });
    } catch (err) {
      fail((err as Error).message, 1);
    }
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  fail((err as Error).message, 1);
});
