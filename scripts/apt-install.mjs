// Installing a missing tool a script needs (etcd, strace) the way CI can:
// as root, with apt-get. Anyone else is told which package to install.
import { spawnSync } from 'node:child_process';

/**
 * Install the Debian package `debianPackage` with apt-get when this process
 * is root (printing what it does on stderr, so a caller's stdout stays
 * clean); otherwise throw, naming the package. `what` says what was missing.
 */
export function aptInstall(debianPackage, what) {
  if (process.getuid?.() !== 0) {
    throw new Error(`${what} not found: install it, e.g. \`sudo apt-get install ${debianPackage}\` on Debian/Ubuntu`);
  }
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', debianPackage]]) {
    process.stderr.write(`${what} not found: running apt-get ${args.join(' ')}\n`);
    const result = spawnSync('apt-get', args, { stdio: ['ignore', 2, 2], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (result.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`}); install ${debianPackage} by hand`);
  }
}
