/**
 * The process logger: pino JSON lines on standard output, or, with
 * `--log-pretty`, pino-pretty's coloured lines for a person at a terminal.
 * pino-pretty is not a dependency (JSON is what log shippers want, and the
 * server should not carry a formatter it does not use): it is loaded only
 * when asked for, and its absence is a clear start-up error.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { pino, type DestinationStream, type Logger } from 'pino';

export const PRETTY_PACKAGE = 'pino-pretty';

/** A logger that cannot be made as configured (exit 2: nothing started). */
export class LoggerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LoggerError';
  }
}

export async function createLogger(options: { level: string; pretty: boolean }): Promise<Logger> {
  const settings = { level: options.level, base: { pid: process.pid } };
  if (!options.pretty) return pino(settings);
  return pino(settings, await prettyStream());
}

type PrettyFactory = (options: Record<string, unknown>) => DestinationStream;

async function prettyStream(): Promise<DestinationStream> {
  let resolved: string;
  try {
    resolved = createRequire(import.meta.url).resolve(PRETTY_PACKAGE);
  } catch {
    throw new LoggerError(`--log-pretty needs the ${PRETTY_PACKAGE} package, which is not installed: run \`npm install ${PRETTY_PACKAGE}\`, or log JSON lines (the default) and pipe them to \`npx ${PRETTY_PACKAGE}\``);
  }
  const loaded = (await import(pathToFileURL(resolved).href)) as { default?: PrettyFactory } & PrettyFactory;
  const factory = typeof loaded.default === 'function' ? loaded.default : loaded;
  if (typeof factory !== 'function') throw new LoggerError(`${PRETTY_PACKAGE} (${resolved}) does not export a stream factory`);
  // In-process and synchronous, so the last lines before process.exit are written.
  return factory({ sync: true, translateTime: 'SYS:standard' });
}
