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
 *   the next start recovers the rest. The same signal again within
 *   SIGNAL_REPEAT_MS of the first is not a second request but the first one
 *   delivered twice: Ctrl-C under `npm start` reaches the server from the
 *   terminal (its whole process group) and again from npm, which forwards
 *   the SIGINT it got to its child; systemd's KillMode=control-group does
 *   the same with SIGTERM.
 * - An uncaught exception or unhandled rejection is logged (fatal, with the
 *   error) and exits 1, crash-only: state after an unexpected error is not
 *   trusted, and the next start recovers from what is on disk.
 *
 * Every exit first lets the log destination drain, for at most
 * LOG_DRAIN_MS_MAX (`exitAfterLog`): the last lines ("stopped", the fatal
 * error) are written when standard output is read, and a reader that is gone
 * or stalled costs those lines, never the exit.
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
  /** Seconds since the process started (the clock of SIGNAL_REPEAT_MS). */
  uptime(): number;
}

/**
 * A repeat of a first SIGINT within this is the same Ctrl-C delivered twice
 * (by the terminal to the process group, and by npm forwarding it), not a
 * second one. SIGTERM comes from a supervisor or a person, once: a second
 * one always means "now".
 */
export const SIGNAL_REPEAT_MS = 1000;
/** How long an exit waits for the log lines still queued to be written. */
export const LOG_DRAIN_MS_MAX = 2000;

/** `proc`, whose exit waits (up to LOG_DRAIN_MS_MAX) for `log` to drain; the first exit asked for wins. */
export function exitAfterLog(log: { drain(timeoutMs: number): Promise<void> }, proc: ProcessLike = process): ProcessLike {
  let exiting = false;
  return {
    on: (event, listener) => proc.on(event, listener),
    uptime: () => proc.uptime(),
    exit: (code) => {
      if (exiting) return;
      exiting = true;
      void log.drain(LOG_DRAIN_MS_MAX).then(() => proc.exit(code));
    },
  };
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
  let stopping: { signal: ShutdownSignal; atSeconds: number } | undefined;
  const onSignal = (signal: ShutdownSignal): void => {
    if (stopping !== undefined) {
      if (signal === 'SIGINT' && stopping.signal === 'SIGINT' && (proc.uptime() - stopping.atSeconds) * 1000 < SIGNAL_REPEAT_MS) {
        log.debug({ signal }, 'the same signal again at once: one request delivered twice (npm forwards what the terminal sent)');
        return;
      }
      log.warn({ signal }, 'second signal: exiting now, without waiting for in-flight requests');
      proc.exit(signalExitCode(signal));
      return;
    }
    stopping = { signal, atSeconds: proc.uptime() };
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
