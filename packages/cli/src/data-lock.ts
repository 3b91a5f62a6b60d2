/**
 * The lock a server process takes on its data directory (and `serve` and
 * `node` on their node's directory) before serving or writing anything:
 * @tessera/engine's lockDirectory, held by the kernel for the life of the
 * process, with this process named as the holder.
 */
import { hostname } from 'node:os';
import { lockDirectory, type DirectoryLock } from '@tessera/engine';

export function lockDataDirectory(dir: string): Promise<DirectoryLock> {
  return lockDirectory(dir, {
    pid: process.pid,
    host: hostname(),
    command: ['tessera', ...process.argv.slice(2)].join(' '),
    startedAt: new Date().toISOString(),
  });
}
