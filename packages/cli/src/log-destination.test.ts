import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LogDestination } from './log-destination.js';

/** A descriptor this process never opened: every write fails with EBADF. */
const NO_SUCH_FD = 987_654;

describe('LogDestination', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'tessera-logdest-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes every line, in order, and drain resolves once they are written', async () => {
    const file = join(dir, 'out.log');
    const fd = openSync(file, 'w');
    try {
      const destination = new LogDestination(fd);
      const lines = Array.from({ length: 5000 }, (_, i) => `{"i":${i},"msg":"line ${'é'.repeat(i % 7)}"}\n`);
      for (const line of lines) destination.write(line);
      await destination.drain(10_000);
      expect(readFileSync(file, 'utf8')).toBe(lines.join(''));
      expect(destination.dropped).toBe(0);
    } finally {
      closeSync(fd);
    }
  });

  it('a few lines are written shortly after they are queued, without a drain', async () => {
    const file = join(dir, 'out.log');
    const fd = openSync(file, 'w');
    try {
      const destination = new LogDestination(fd);
      destination.write('one\n');
      destination.write('two\n');
      // Held for a short delay (batched with the lines that follow), not until an exit.
      const deadline = Date.now() + 5_000;
      while (readFileSync(file, 'utf8') !== 'one\ntwo\n' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(readFileSync(file, 'utf8')).toBe('one\ntwo\n');
    } finally {
      closeSync(fd);
    }
  });

  it('past queueBytesMax a line is dropped and counted, not queued', async () => {
    const file = join(dir, 'out.log');
    const fd = openSync(file, 'w');
    try {
      const destination = new LogDestination(fd, 100);
      // The queue holds at most 100 bytes: the rest are dropped before the first write.
      for (let i = 0; i < 50; i++) destination.write(`${String(i).padStart(9, '0')}\n`);
      await destination.drain(10_000);
      const written = readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').length;
      expect(written + destination.dropped).toBe(50);
      expect(destination.dropped).toBeGreaterThan(0);
    } finally {
      closeSync(fd);
    }
  });

  it('a descriptor that fails for good closes the destination: its lines and every later one are dropped, nothing throws', async () => {
    const destination = new LogDestination(NO_SUCH_FD);
    for (let i = 0; i < 10; i++) destination.write(`line ${i}\n`);
    await destination.drain(10_000);
    expect(destination.closedBy).toBe('EBADF');
    destination.write('after\n');
    expect(destination.dropped).toBe(11);
    await expect(destination.drain(10_000)).resolves.toBeUndefined();
  });
});
