/**
 * The process logger: pino JSON lines on standard output, or, with
 * `--log-pretty`, pino-pretty's coloured lines for a person at a terminal.
 * Either way the lines go through a LogDestination (log-destination.ts):
 * a standard output that fails or stalls loses lines, counted, and never
 * blocks the process.
 * pino-pretty is a dependency of this package but loaded only when asked
 * for (JSON is what log shippers want); should an install lack it, that is
 * a clear start-up error.
 */
import { createRequire } from 'node:module';
import { isatty } from 'node:tty';
import { pathToFileURL } from 'node:url';
import { pino, type Logger } from 'pino';
import { LogDestination } from './log-destination.js';

export const PRETTY_PACKAGE = 'pino-pretty';

/** A logger that cannot be made as configured (exit 2: nothing started). */
export class LoggerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LoggerError';
  }
}

/** The destinations of this process's loggers (one, standard output, in a server process). */
const destinations: LogDestination[] = [];

/** Log lines this process could not write (`tessera_log_lines_dropped_total`). */
export function logLinesDropped(): number {
  let dropped = 0;
  for (const destination of destinations) dropped += destination.dropped;
  return dropped;
}

export interface ProcessLogger {
  log: Logger;
  destination: LogDestination;
}

export async function createLogger(options: { level: string; pretty: boolean }): Promise<ProcessLogger> {
  const settings = { level: options.level, base: { pid: process.pid } };
  const destination = new LogDestination(1);
  const format = options.pretty ? await prettyFormat() : undefined;
  destinations.push(destination);
  const log = format === undefined
    ? pino(settings, destination)
    : pino(settings, { write: (line: string) => destination.write(format(line)) });
  return { log, destination };
}

type PrettyFormat = (line: string) => string;
type PrettyFactory = (options: Record<string, unknown>) => PrettyFormat;

/** pino-pretty's formatter alone (its `prettyFactory`): the lines it makes are written by the LogDestination. */
async function prettyFormat(): Promise<PrettyFormat> {
  let resolved: string;
  try {
    resolved = createRequire(import.meta.url).resolve(PRETTY_PACKAGE);
  } catch {
    throw new LoggerError(`--log-pretty needs the ${PRETTY_PACKAGE} package, which is not installed: run \`npm install ${PRETTY_PACKAGE}\`, or log JSON lines (the default) and pipe them to \`npx ${PRETTY_PACKAGE}\``);
  }
  const loaded = (await import(pathToFileURL(resolved).href)) as { prettyFactory?: unknown; default?: { prettyFactory?: unknown } };
  const factory = loaded.prettyFactory ?? loaded.default?.prettyFactory;
  if (typeof factory !== 'function') throw new LoggerError(`${PRETTY_PACKAGE} (${resolved}) does not export prettyFactory`);
  return (factory as PrettyFactory)({ translateTime: 'SYS:standard', colorize: isatty(1) });
}
