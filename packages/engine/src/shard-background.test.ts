/**
 * A shard copy is heard: it logs its open through the logger it is given,
 * and a segment flush that fails (its segment store's writes throw) is an
 * error in the log, a count in its metrics and a `flushFailure` (which the
 * node reports and `/readyz` turns into a reason) until a flush succeeds.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EngineLogger } from './logger.js';
import { Shard } from './shard.js';
import type { ShardDatabase } from './store/oplog.js';

interface Line { level: 'info' | 'warn' | 'error'; bindings: Record<string, unknown>; fields: Record<string, unknown>; message: string }

/** An EngineLogger that keeps its lines, and calls `onError` with each error line. */
function recorder(lines: Line[], onError: (line: Line) => void = () => {}, bindings: Record<string, unknown> = {}): EngineLogger {
  const at = (level: Line['level']) => (fields: Record<string, unknown>, message: string): void => {
    const line = { level, bindings, fields, message };
    lines.push(line);
    if (level === 'error') onError(line);
  };
  return { info: at('info'), warn: at('warn'), error: at('error'), child: (more) => recorder(lines, onError, { ...bindings, ...more }) };
}

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-shard-bg-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('a failing flush is logged, counted and reported until a flush succeeds', async () => {
  const lines: Line[] = [];
  let errorLogged: (line: Line) => void = () => {};
  const firstError = new Promise<Line>((resolve) => {
    errorLogged = resolve;
  });
  let persisted: () => void = () => {};
  const flushed = new Promise<void>((resolve) => {
    persisted = resolve;
  });
  const shard = await Shard.open({
    path: join(dir, 'shard'),
    log: recorder(lines, (line) => errorLogged(line)),
    index: { idleFlushMs: 20, retryMs: 5, onPersisted: () => persisted() },
  });
  try {
    expect(lines).toEqual([expect.objectContaining({ level: 'info', message: 'shard copy opened', fields: expect.objectContaining({ documents: 0, seq: 0 }) })]);
    for (let i = 1; i <= 5; i++) await shard.write({ op: 'index', id: i, body: { title: `doc ${i}` } });
    // The segment store writes into the shard's database: from now on every batch it starts throws.
    const db = (shard as unknown as { state: { db: ShardDatabase } }).state.db;
    const realBatch = db.batch.bind(db);
    (db as unknown as { batch: () => unknown }).batch = () => {
      throw new Error('disk full');
    };
    const line = await firstError;
    expect(line.message).toBe('segment flush failed; the write buffer stays in memory and the flush is retried');
    expect(line.fields).toMatchObject({ task: 'flush', failures: 1, appliedSeq: 5, persistedSeq: 0 });
    expect((line.fields.err as Error).message).toBe('disk full');
    const failing = shard.metrics();
    expect(failing.index.flushFailures).toBeGreaterThanOrEqual(1);
    expect(failing.index.flushes).toBe(0);
    expect(failing.flushFailure).toMatchObject({ message: 'disk full' });
    expect(failing.flushFailure!.failures).toBeGreaterThanOrEqual(1);
    expect(failing.flushFailure!.sinceMs).toBeLessThanOrEqual(Date.now());
    // The documents stay searchable from the frozen buffer meanwhile.
    expect((await shard.search({ k: 10 })).total).toBe(5);

    (db as unknown as { batch: unknown }).batch = realBatch;
    await flushed;
    const healed = shard.metrics();
    expect(healed.flushFailure).toBeNull();
    expect(healed.index.flushes).toBeGreaterThanOrEqual(1);
    expect(healed.index.segments).toBeGreaterThanOrEqual(1);
    expect(healed.index.flushFailures).toBeGreaterThanOrEqual(failing.index.flushFailures);
    expect(lines.filter((l) => l.level === 'error').every((l) => l.fields.task === 'flush')).toBe(true);
  } finally {
    await shard.close();
  }
});
