/**
 * How a long-running command (`serve`, `coordinator`, `node`) ends.
 *
 * - The first SIGTERM or SIGINT stops it cleanly: `close()` turns readiness
 *   to 503, closes the listener, lets in-flight work drain (bounded by
 *   shutdownGraceMs) and flushes and closes the shards; then exit 0 (1 if
 *   the close failed). If the close itself hangs past `forceAfterMs` (a disk
 *   that no longer answers), the process exits 1.
 * - A second signal exits at once, with 128 + the signal's number as a shell
 *   reports a process killed by it (143 for SIGTERM, 130 for SIGINT): the
 *   operator asked twice. Acknowledged writes are in LevelDB's log already;
 *   the next start recovers the rest.
 * - An uncaught exception or unhandled rejection is logged (fatal, with the
 *   error) and exits 1, crash-only: state after an unexpected error is not
 *   trusted, and the next start recovers from what is on disk.
 *
 * pino writes through sonic-boom, which flushes synchronously on
 * `process.exit`, so the last lines are not lost.
 */
import { constants } from 'node:os';
import type { Logger } from 'pino';

export interface Stoppable {
  close(): Promise<void>;
}

/** The parts of `process` used here: tests pass an EventEmitter and a recording exit. */
export interface ProcessLike {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  exit(code: number): never | void;
}

export const SHUTDOWN_SIGNALS = ['SIGTERM', 'SIGINT'] as const;
export type ShutdownSignal = (typeof SHUTDOWN_SIGNALS)[number];

/** Exit code of a process ended by `signal`, as shells report it. */
export function signalExitCode(signal: ShutdownSignal): number {
  return 128 + constants.signals[signal];
}

/** Log uncaught exceptions and unhandled rejections as fatal, then exit 1. Install once, as early as possible. */
export function exitOnCrash(log: Logger, proc: ProcessLike = process): void {
  const crash = (kind: string) => (err: unknown) => {
    try {
      log.fatal({ err }, `${kind}: exiting (the next start recovers from what is on disk)`);
    } finally {
      proc.exit(1);
    }
  };
  proc.on('uncaughtException', crash('uncaught exception'));
  proc.on('unhandledRejection', crash('unhandled rejection'));
}

/**
 * Stop `running` on the first SIGTERM/SIGINT and exit 0; exit at once on a
 * second one. `forceAfterMs` bounds the whole close (drain + flush).
 */
export function stopOnSignals(log: Logger, running: Stoppable, forceAfterMs: number, proc: ProcessLike = process): void {
  let stopping = false;
  const onSignal = (signal: ShutdownSignal): void => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now, without waiting for in-flight requests');
      proc.exit(signalExitCode(signal));
      return;
    }
    stopping = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      log.fatal({ signal, forceAfterMs }, 'shutdown did not finish in time: exiting');
      proc.exit(1);
    }, forceAfterMs);
    force.unref();
    running.close().then(
      () => {
        clearTimeout(force);
        log.info('stopped');
        proc.exit(0);
      },
      (err: unknown) => {
        clearTimeout(force);
        log.error({ err }, 'shutdown failed');
        proc.exit(1);
      },
    );
  };
  for (const signal of SHUTDOWN_SIGNALS) proc.on(signal, () => onSignal(signal));
}

/** What the flush and close of the shards may take beyond the drain before a shutdown counts as hung. */
export const CLOSE_AFTER_DRAIN_MS_MAX = 60_000;
