/**
 * The `tessera` command line as a commander program: `serve` runs the
 * embedded server; `coordinator` and `node` run the two halves of a cluster;
 * `import` and `dump` move documents in and out of a running server;
 * `snapshot` copies a running server and `snapshot restore` lays the copy out
 * as a data directory. Built by
 * a function so tests can parse real command lines (docker-compose.yml's)
 * without starting anything.
 *
 * Exit codes: 0 done; 1 failed (some documents not imported, server error);
 * 2 usage or configuration error (nothing was done).
 */
import { setFlagsFromString } from 'node:v8';
import { Command, InvalidArgumentError, Option, type OutputConfiguration } from 'commander';
import type { Logger } from 'pino';
import {
  CONFIG_FILE_ENV, ConfigError, coordinatorOptionsOf, defaultOf, loadConfigFile, nodeOptionsOf, parseText, resolveConfig,
  REDACTED, redactSecrets, serveOptionsOf, SETTINGS, settingsOf, unknownEnvironment, type CommandName, type ConfigKey, type ResolvedConfig, type Setting,
} from './config.js';
import { runCoordinator } from './coordinator.js';
import { anonymousExposure, clusterExposure } from './exposure.js';
import { API_KEY_ENV, DEFAULT_URL, URL_ENV } from './client-auth.js';
import { collectWhenIdle, IDLE_COLLECTOR_DEFAULTS } from './idle-gc.js';
import { SERVER_RUNTIME_V8_FLAGS } from './node-flags.js';
import { CLOSE_AFTER_DRAIN_MS_MAX, exitAfterLog, exitOnCrash, stopOnSignals } from './lifecycle.js';
import { createLogger, LoggerError, type ProcessLogger } from './logging.js';
import { runNode } from './node.js';
import { DEFAULT_NODE_NAME, serve } from './serve.js';
import { TESSERA_VERSION } from './version.js';

/** A failure that ends the command with this exit code; main prints the message. */
export class CliExit extends Error {
  constructor(message: string, readonly exitCode: number) {
    super(message);
    this.name = 'CliExit';
  }
}

/** What a long-running command does with its resolved configuration. */
export type CommandRun<C extends CommandName> = (resolved: ResolvedConfig<C>) => Promise<void>;

export interface ProgramOptions {
  /** Where `TESSERA_*` variables are read from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Replace what `serve`, `coordinator` or `node` do once configured (tests parse command lines with these). */
  run?: { [C in CommandName]?: CommandRun<C> };
  /** Throw commander's usage errors instead of exiting (tests). */
  exitOverride?: boolean;
  /** Where commander writes help and usage errors (tests keep them quiet). */
  output?: OutputConfiguration;
}

function integer(min: number, max: number) {
  return (value: string): number => {
    if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
    return n;
  };
}

/** A command's flag for a setting: validated by the same rule as its variable and config key. */
function settingOption(s: Setting, command: CommandName): Option {
  const placeholder = s.kind.type === 'integer' ? (s.kind.word === undefined ? '<n>' : `<n|${s.kind.word}>`) : s.kind.type === 'path' ? (s.kind.file === true ? '<file>' : '<dir>') : s.kind.type === 'url' ? '<url>' : `<${s.flag.split('-').pop() as string}>`;
  const fallback = defaultOf(s, command);
  if (s.kind.type === 'boolean') {
    return new Option(`--${s.flag}`, `${s.description} (config ${s.key}, env ${s.env}=true)`);
  }
  const option = new Option(`${s.short === undefined ? '' : `-${s.short}, `}--${s.flag} ${placeholder}`,
    `${s.description} (config ${s.key}, env ${s.env}, ${fallback === null ? 'required' : fallback === '' ? 'none by default' : `default ${String(fallback)}`})`);
  if (s.kind.type === 'enum') return option.choices(s.kind.values);
  // Checked by resolveConfig, whose message does not repeat the value (commander's would).
  if (s.kind.type === 'secret') return option;
  return option.argParser((text: string) => {
    const checked = parseText(s, text);
    if (!checked.ok) throw new InvalidArgumentError(checked.expected);
    return checked.value;
  });
}

/** `tessera import` and `dump`: the server's key. */
const API_KEY_HELP = `the server's API key, sent as Authorization: Bearer (env ${API_KEY_ENV}; prefer the variable: flags show in ps)`;

const DAEMONS: Array<{ command: CommandName; description: string }> = [
  { command: 'serve', description: 'run the embedded server (coordinator and shard node in one process)' },
  { command: 'coordinator', description: 'run a cluster coordinator: the HTTP API and the RPC listener shard nodes join (no shard node of its own)' },
  { command: 'node', description: 'run a shard node that joins a coordinator (--join ws://host:rpc-port) and hosts the shard copies allocated to it' },
];

export function buildProgram(options: ProgramOptions = {}): Command {
  const env = options.env ?? process.env;
  const program = new Command('tessera')
    .description('Tessera: distributed document index, content store and search server')
    .version(TESSERA_VERSION)
    .showHelpAfterError();
  // Set before the commands are added: they inherit both.
  if (options.exitOverride === true) program.exitOverride();
  if (options.output !== undefined) program.configureOutput(options.output);

  for (const { command, description } of DAEMONS) {
    const cmd = program
      .command(command)
      .description(description)
      .option('-c, --config <file>', `config file: JSON5 (.json, .json5) or YAML (.yaml, .yml) (env ${CONFIG_FILE_ENV})`)
      .option('--print-config', 'print the effective configuration as JSON and exit');
    for (const s of settingsOf(command)) cmd.addOption(settingOption(s, command));
    cmd.addHelpText('after', '\nPrecedence: flag > TESSERA_* environment > config file > default.\n');
    cmd.action(async (flags: Record<string, unknown>) => {
      const resolved = await configure(command, flags, env);
      if (flags.printConfig === true) {
        process.stdout.write(`${JSON.stringify(redactSecrets(resolved.config), null, 2)}\n`);
        return;
      }
      const replaced = options.run?.[command] as CommandRun<typeof command> | undefined;
      if (replaced !== undefined) return replaced(resolved);
      return runDaemon(command, resolved, env);
    });
  }

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
    .option('--api-key <key>', API_KEY_HELP)
    .addHelpText('after', `
Documents with an _id replace the document of that ID, so a killed import can
simply be run again. Documents without one get a generated ID (a rerun adds
them again). Bad lines are reported on standard error as FILE:LINE: message
and do not stop the rest; the exit code is 1 when any line failed.`)
    .action(async (file: string, flags: { index: string; url?: string; batch: number; concurrency: number; format?: 'ndjson' | 'msgpack'; progressInterval: number; quiet?: boolean; apiKey?: string }) => {
      try {
        // The client commands are loaded when run: they bring undici, which every server start would otherwise import.
        const { runImport } = await import('./import.js');
        const summary = await runImport({
          source: file,
          index: flags.index,
          url: flags.url ?? (env[URL_ENV] || DEFAULT_URL),
          batchItems: flags.batch,
          concurrency: flags.concurrency,
          format: flags.format,
          progress: flags.quiet !== true,
          progressIntervalMs: flags.progressInterval * 1000,
          apiKey: flags.apiKey ?? env[API_KEY_ENV],
        });
        process.exitCode = summary.failed > 0 || summary.aborted !== undefined ? 1 : 0;
      } catch (err) {
        throw new CliExit((err as Error).message, 2);
      }
    });

  program
    .command('dump')
    .description('write every document of an index of a running server as NDJSON (DUMP), ready for `tessera import`')
    .requiredOption('-i, --index <path>', 'index to dump, e.g. /debian/')
    .option('-u, --url <url>', `server URL (env ${URL_ENV}, default ${DEFAULT_URL})`)
    .option('-o, --output <file>', 'file to write (gzipped when it ends in .gz), or - for standard output', '-')
    .option('--api-key <key>', API_KEY_HELP)
    .action(async (flags: { index: string; url?: string; output: string; apiKey?: string }) => {
      try {
        const { runDump } = await import('./dump.js');
        await runDump({ index: flags.index, url: flags.url ?? (env[URL_ENV] || DEFAULT_URL), output: flags.output, apiKey: flags.apiKey ?? env[API_KEY_ENV] });
      } catch (err) {
        throw new CliExit((err as Error).message, 1);
      }
    });

  // `snapshot restore … -q`: the flags after `restore` are the subcommand's, not taken by `snapshot`'s own of the same name
  // (commander reads a command's options before its subcommand only when every parent up to the program says so).
  program.enablePositionalOptions();
  const snapshot = program
    .command('snapshot')
    .enablePositionalOptions()
    .description('copy every index of a running server (embedded or cluster) into a directory: each shard at one point in time, '
      + 'with the cluster state and a SHA-256 of every file (docs/snapshots.md)')
    .option('-o, --out <dir>', 'directory to write (new or empty)')
    .option('-u, --url <url>', `server URL (env ${URL_ENV}, default ${DEFAULT_URL})`)
    .option('--progress-interval <seconds>', 'seconds between progress lines when standard error is not a terminal', integer(1, 86_400), 5)
    .option('-q, --quiet', 'no progress bar or progress lines')
    .option('--api-key <key>', `${API_KEY_HELP}; the key needs the admin action`)
    .action(async (flags: { out?: string; url?: string; progressInterval: number; quiet?: boolean; apiKey?: string }) => {
      if (flags.out === undefined) throw new CliExit('give the directory to write with --out DIR (or run `tessera snapshot restore DIR --data DIR`)', 2);
      try {
        const { runSnapshot } = await import('./snapshot.js');
        await runSnapshot({
          out: flags.out, url: flags.url ?? (env[URL_ENV] || DEFAULT_URL), apiKey: flags.apiKey ?? env[API_KEY_ENV],
          progress: flags.quiet !== true, progressIntervalMs: flags.progressInterval * 1000,
        });
      } catch (err) {
        throw new CliExit((err as Error).message, 1);
      }
    });
  snapshot
    .command('restore')
    .description('check every checksum of a snapshot, then lay it out as a new data directory that `tessera serve --data DIR` serves')
    .argument('<snapshot>', 'the directory `tessera snapshot --out` wrote')
    .requiredOption('-d, --data <dir>', 'data directory to create (new or empty)')
    .option('--name <name>', `the node name \`tessera serve\` will run with (default ${DEFAULT_NODE_NAME})`, (text: string) => {
      const checked = parseText(SETTINGS.find((s) => s.key === 'name') as Setting, text);
      if (!checked.ok) throw new InvalidArgumentError(checked.expected);
      return checked.value as string;
    }, DEFAULT_NODE_NAME)
    .option('--progress-interval <seconds>', 'seconds between progress lines when standard error is not a terminal', integer(1, 86_400), 5)
    .option('-q, --quiet', 'no progress bar or progress lines')
    .action(async (from: string, flags: { data: string; name: string; progressInterval: number; quiet?: boolean }) => {
      try {
        const { runRestore } = await import('./snapshot.js');
        await runRestore({ from, data: flags.data, nodeName: flags.name, progress: flags.quiet !== true, progressIntervalMs: flags.progressInterval * 1000 });
      } catch (err) {
        throw new CliExit((err as Error).message, 1);
      }
    });

  return program;
}

/** Flags, environment, config file and defaults → the command's configuration, or CliExit(2) naming every problem. */
async function configure<C extends CommandName>(command: C, flags: Record<string, unknown>, env: NodeJS.ProcessEnv): Promise<ResolvedConfig<C>> {
  const settingFlags: Partial<Record<ConfigKey, unknown>> = {};
  for (const s of settingsOf(command)) if (flags[s.key] !== undefined) settingFlags[s.key] = flags[s.key];
  try {
    const configEnv = env[CONFIG_FILE_ENV];
    const configPath = (flags.config as string | undefined) ?? (configEnv === '' ? undefined : configEnv);
    const file = configPath === undefined ? undefined : await loadConfigFile(configPath);
    return resolveConfig({ command, flags: settingFlags, env, file });
  } catch (err) {
    if (err instanceof ConfigError) throw new CliExit(`invalid configuration:\n  ${err.problems.join('\n  ')}`, 2);
    throw err;
  }
}

/** Start a long-running command, log its effective configuration, and stop it cleanly on SIGTERM or SIGINT. */
async function runDaemon(command: CommandName, resolved: ResolvedConfig<CommandName>, env: NodeJS.ProcessEnv): Promise<void> {
  const { config, sources } = resolved;
  const refusal = (command === 'node' ? undefined : anonymousExposure(config as ResolvedConfig<'serve'>['config']))
    ?? clusterExposure(command, config as Parameters<typeof clusterExposure>[1]);
  if (refusal !== undefined) throw new CliExit(refusal, 2);
  // `ps` and `pgrep -f 'tessera node'` show what runs, without the interpreter and script paths (nor a secret given as a flag).
  process.title = ['tessera', ...redactedArguments(process.argv.slice(2))].join(' ');
  let logger: ProcessLogger;
  try {
    logger = await createLogger({ level: config.logLevel, pretty: config.logPretty });
  } catch (err) {
    if (err instanceof LoggerError) throw new CliExit(err.message, 2);
    throw err;
  }
  const { log } = logger;
  // Every exit lets the last log lines out first, for a bounded time.
  const proc = exitAfterLog(logger.destination);
  exitOnCrash(log, proc);
  const unknown = unknownEnvironment(env);
  if (unknown.length > 0) log.warn({ variables: unknown }, 'TESSERA_* variables that name no setting are ignored');
  // The effective configuration, once, with where each value came from.
  log.info({ command, config: redactSecrets(config), sources, configFile: resolved.file }, 'starting');
  let running: { close(): Promise<void> };
  // Before the heap fills: V8 reads them at each full collection (node-flags.ts).
  for (const flag of SERVER_RUNTIME_V8_FLAGS) setFlagsFromString(flag);
  try {
    running = await start(command, resolved, log);
  } catch (err) {
    log.fatal({ err }, 'could not start');
    proc.exit(1);
    return;
  }
  stopOnSignals(log, running, config.shutdownGraceMs + CLOSE_AFTER_DRAIN_MS_MAX, proc);
  collectWhenIdle(IDLE_COLLECTOR_DEFAULTS, (collection) => log.debug(collection, 'idle: heap collected'),
    (trim) => log.debug(trim, 'native memory given back'));
}

/** Command-line arguments with the values of secret flags (`--api-key K`, `--cluster-secret=S`) replaced. */
function redactedArguments(args: readonly string[]): string[] {
  const secretFlags = SETTINGS.filter((s) => s.kind.type === 'secret').map((s) => `--${s.flag}`);
  return args.map((arg, i) => {
    const previous = args[i - 1];
    if (previous !== undefined && secretFlags.includes(previous)) return REDACTED;
    const flag = secretFlags.find((f) => arg.startsWith(`${f}=`));
    return flag === undefined ? arg : `${flag}=${REDACTED}`;
  });
}

function start(command: CommandName, resolved: ResolvedConfig<CommandName>, log: Logger): Promise<{ close(): Promise<void> }> {
  switch (command) {
    case 'serve': return serve(serveOptionsOf((resolved as ResolvedConfig<'serve'>).config), log);
    case 'coordinator': return runCoordinator(coordinatorOptionsOf((resolved as ResolvedConfig<'coordinator'>).config), log);
    case 'node': return runNode(nodeOptionsOf((resolved as ResolvedConfig<'node'>).config), log);
  }
}
