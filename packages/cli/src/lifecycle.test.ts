import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { exitAfterLog, exitOnCrash, LOG_DRAIN_MS_MAX, signalExitCode, SIGNAL_REPEAT_MS, stopOnSignals, type ProcessLike } from './lifecycle.js';

/** A process stand-in: signals and crashes are emitted by the test, exits recorded. */
function fakeProcess(): ProcessLike & EventEmitter & { exits: number[]; seconds: number } {
  const proc = new EventEmitter() as EventEmitter & ProcessLike & { exits: number[]; seconds: number };
  proc.exits = [];
  proc.seconds = 100;
  proc.exit = (code: number) => {
    proc.exits.push(code);
  };
  proc.uptime = () => proc.seconds;
  return proc;
}

/** A logger whose lines land in an array. */
function recordingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

it('exit codes of a second signal are those a shell shows for a process killed by it', () => {
  expect(signalExitCode('SIGTERM')).toBe(143);
  expect(signalExitCode('SIGINT')).toBe(130);
});

it('first SIGTERM closes and exits 0 once closed; a second signal meanwhile exits at once, non-zero', async () => {
  const proc = fakeProcess();
  const { log, lines } = recordingLogger();
  let finishClose!: () => void;
  let closes = 0;
  stopOnSignals(log, { close: () => { closes++; return new Promise<void>((resolve) => { finishClose = resolve; }); } }, 60_000, proc);
  proc.emit('SIGTERM');
  await settle();
  expect(closes).toBe(1);
  expect(proc.exits).toEqual([]);
  proc.seconds += 0.5;
  proc.emit('SIGINT');
  expect(proc.exits).toEqual([130]);
  expect(closes).toBe(1);
  finishClose();
  await settle();
  expect(proc.exits).toEqual([130, 0]);
  expect(lines.map((l) => l.msg)).toEqual(['shutting down', 'second signal: exiting now, without waiting for in-flight requests', 'stopped']);
  expect(lines[0]?.signal).toBe('SIGTERM');
});

it('a second SIGTERM forces the exit however soon it comes: only SIGINT is delivered twice (terminal and npm)', async () => {
  const proc = fakeProcess();
  const { log } = recordingLogger();
  stopOnSignals(log, { close: () => new Promise<void>(() => undefined) }, 60_000, proc);
  proc.emit('SIGTERM');
  proc.seconds += (SIGNAL_REPEAT_MS / 1000) / 10;
  proc.emit('SIGTERM');
  expect(proc.exits).toEqual([143]);
});

it('SIGINT again at once is one Ctrl-C delivered twice (terminal and npm): the shutdown goes on; later, it forces the exit', async () => {
  const proc = fakeProcess();
  const { log, lines } = recordingLogger();
  let finishClose!: () => void;
  stopOnSignals(log, { close: () => new Promise<void>((resolve) => { finishClose = resolve; }) }, 60_000, proc);
  proc.emit('SIGINT');
  proc.seconds += (SIGNAL_REPEAT_MS / 1000) / 10;
  proc.emit('SIGINT');
  await settle();
  expect(proc.exits).toEqual([]);
  proc.seconds += SIGNAL_REPEAT_MS / 1000;
  proc.emit('SIGINT');
  expect(proc.exits).toEqual([130]);
  finishClose();
  await settle();
  expect(lines.map((l) => l.msg)).toEqual(['shutting down', 'second signal: exiting now, without waiting for in-flight requests', 'stopped']);
});

it('exitAfterLog exits once the log has drained, or after LOG_DRAIN_MS_MAX when it does not; the first exit wins', async () => {
  const proc = fakeProcess();
  let drained!: () => void;
  const asked: number[] = [];
  const exiting = exitAfterLog({ drain: (ms) => { asked.push(ms); return new Promise<void>((resolve) => { drained = resolve; }); } }, proc);
  exiting.exit(0);
  exiting.exit(1);
  await settle();
  expect(proc.exits).toEqual([]);
  expect(asked).toEqual([LOG_DRAIN_MS_MAX]);
  drained();
  await settle();
  expect(proc.exits).toEqual([0]);
});

it('a close that fails exits 1 with the error logged', async () => {
  const proc = fakeProcess();
  const { log, lines } = recordingLogger();
  stopOnSignals(log, { close: () => Promise.reject(new Error('disk gone')) }, 60_000, proc);
  proc.emit('SIGINT');
  await settle();
  expect(proc.exits).toEqual([1]);
  const failed = lines.find((l) => l.msg === 'shutdown failed');
  expect((failed?.err as { message?: string } | undefined)?.message).toBe('disk gone');
});

it('a close that hangs past forceAfterMs exits 1', async () => {
  const proc = fakeProcess();
  const { log, lines } = recordingLogger();
  stopOnSignals(log, { close: () => new Promise<void>(() => undefined) }, 20, proc);
  proc.emit('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 80));
  expect(proc.exits).toEqual([1]);
  expect(lines.some((l) => l.msg === 'shutdown did not finish in time: exiting' && l.level === 60)).toBe(true);
});

it('an uncaught exception or unhandled rejection is logged as fatal with the error, and exits 1', () => {
  const proc = fakeProcess();
  const { log, lines } = recordingLogger();
  exitOnCrash(log, proc);
  proc.emit('uncaughtException', new Error('bug'));
  proc.emit('unhandledRejection', new Error('forgotten promise'));
  expect(proc.exits).toEqual([1, 1]);
  expect(lines.map((l) => [l.level, (l.err as { message: string }).message])).toEqual([[60, 'bug'], [60, 'forgotten promise']]);
  expect(lines[0]?.msg).toMatch(/^uncaught exception: exiting/);
  expect(lines[1]?.msg).toMatch(/^unhandled rejection: exiting/);
});
