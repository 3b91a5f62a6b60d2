/** Running the real `tessera` CLI as a child process (import, dump, serve that exits) and collecting what it prints. */
import { spawn, type ChildProcess } from 'node:child_process';
import { CLI } from './harness.js';

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Start `tessera <args>`; `input` is written to its standard input (then closed), else stdin is empty. */
export function startCli(args: string[], options: { env?: Record<string, string>; input?: Buffer | string } = {}): { child: ChildProcess; done: Promise<CliRun> } {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => { stdout += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
  child.stdin!.on('error', () => undefined);
  child.stdin!.end(options.input);
  const done = new Promise<CliRun>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

export function runCli(args: string[], options: { env?: Record<string, string>; input?: Buffer | string } = {}): Promise<CliRun> {
  return startCli(args, options).done;
}
