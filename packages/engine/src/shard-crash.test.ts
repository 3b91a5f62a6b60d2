/**
 * Crash safety: a child process writes to a shard and prints every
 * acknowledged write; the parent kills it with SIGKILL mid-stream, reopens the
 * shard and checks that no acknowledged write is lost and that the counters
 * and the operation log agree with the documents.
 *
 * stdout is a pipe, and pipe writes are synchronous on Linux, so a line the
 * child printed is in the pipe before the next write starts.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shard } from './shard.js';

const ACKS_BEFORE_KILL = 3000;

const CHILD = `
import { Shard } from ${JSON.stringify(new URL('./index.js', import.meta.url).href)};
const shard = await Shard.open({ path: process.env.SHARD_PATH });
const print = (line) => process.stdout.write(line + '\\n');
await Promise.all(Array.from({ length: 8 }, async (_, w) => {
  for (let i = 0; ; i++) {
    const put = await shard.write({ op: 'index', id: 'w' + w + '-' + i, body: { w, i, pad: 'x'.repeat(200) }, commit: i % 10 === 0 });
    print('put ' + put.id + ' ' + put.docid);
    const counter = await shard.write({ op: 'index', id: 'counter-' + w, body: { n: i } });
    print('counter ' + w + ' ' + i + ' ' + counter.version);
    if (i % 5 === 4) {
      await shard.write({ op: 'delete', id: 'w' + w + '-' + (i - 1) });
      print('del w' + w + '-' + (i - 1));
    }
  }
}));
`;

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-crash-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * Runs `source` in a child process on the shard in `path` and kills it (SIGKILL) once it has printed `lines`
 * lines; resolves with the complete lines it printed (what it acknowledged). From a file, not `-e`: worker
 * threads inherit the process's execArgv, and `--input-type` makes the segment flush worker fail to start.
 */
async function killAfterLines(source: string, path: string, lines: number): Promise<string[]> {
  const file = join(dir, 'child.mjs');
  await writeFile(file, source);
  const child = spawn(process.execPath, [file], { env: { ...process.env, SHARD_PATH: path }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let stderr = '';
  let printed = 0;
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdout.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    output += text;
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) printed++;
    if (printed >= lines && child.exitCode === null && !child.killed) child.kill('SIGKILL');
  });
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, sig) => resolve(sig)));
  expect(stderr).toBe('');
  expect(signal).toBe('SIGKILL');
  // Only complete lines were acknowledged.
  const complete = output.slice(0, output.lastIndexOf('\n')).split('\n');
  expect(complete.length).toBeGreaterThanOrEqual(lines);
  return complete;
}

it('loses no acknowledged write when the process is killed', async () => {
  const path = join(dir, 'shard');
  const lines = await killAfterLines(CHILD, path, ACKS_BEFORE_KILL);
  const puts = new Map<string, number>();
  const deleted = new Set<string>();
  const counters = new Map<number, { n: number; version: number }>();
  for (const line of lines) {
    const [kind, a, b, c] = line.split(' ');
    if (kind === 'put') puts.set(a, Number(b));
    else if (kind === 'del') deleted.add(a);
    else if (kind === 'counter') counters.set(Number(a), { n: Number(b), version: Number(c) });
    else throw new Error(`unexpected line ${line}`);
  }

  const shard = await Shard.open({ path });
  try {
    for (const [id, docid] of puts) {
      const doc = await shard.get(id);
      const [w, i] = id.slice(1).split('-').map(Number);
      if (deleted.has(id)) {
        expect(doc).toBeUndefined();
      } else if (doc === undefined) {
        // Only an unacknowledged delete may have removed it: the child deletes w-i once 'counter w i+1' is acknowledged.
        expect(i % 5 === 3 && (counters.get(w)?.n ?? -1) >= i + 1).toBe(true);
      } else {
        expect(doc).toMatchObject({ id, docid, version: 1, body: { w, i } });
      }
    }
    for (const [w, acked] of counters) {
      const doc = await shard.get(`counter-${w}`);
      expect(doc).toBeDefined();
      expect(doc!.version).toBeGreaterThanOrEqual(acked.version);
      expect(doc!.body.n as number).toBeGreaterThanOrEqual(acked.n);
      expect(doc!.version).toBe((doc!.body.n as number) + 1);
    }
    // The counters, the documents and the operation log agree.
    const stats = shard.stats();
    const docids = new Set<number>();
    let documents = 0;
    for await (const doc of shard.documents()) {
      documents++;
      docids.add(doc.docid);
      expect(doc.docid).toBeLessThanOrEqual(stats.lastDocid);
      expect(doc.seq).toBeLessThanOrEqual(stats.seq);
    }
    expect(documents).toBe(stats.documents);
    expect(docids.size).toBe(documents);
    const log = await shard.readOplog(0);
    expect(log.length).toBe(stats.seq);
    expect(log.filter((e) => e.op === 'put' && e.version === 1 && e.id !== undefined && String(e.id).startsWith('w')).length)
      .toBeGreaterThanOrEqual(puts.size);
    // And the shard keeps working after the crash.
    expect(await shard.write({ op: 'index', id: 'after', body: {} })).toMatchObject({ seq: stats.seq + 1, docid: stats.lastDocid + 1 });
  } finally {
    await shard.close();
  }
});

/** Bulk writers into a copy with a tiny write buffer, so that its flushes lag behind and `admit` holds writes back. */
const BULK_CHILD = `
import { Shard } from ${JSON.stringify(new URL('./index.js', import.meta.url).href)};
const shard = await Shard.open({ path: process.env.SHARD_PATH, batchEntriesMax: 50, index: { writeBufferOpsMax: 100, replayEntriesMax: 200, idleFlushMs: 0 } });
const schema = { w: { _type: 'text' }, n: { _type: 'integer' } };
let next = 0;
await Promise.all(Array.from({ length: 4 }, async () => {
  for (;;) {
    const from = next;
    next += 50;
    const writes = Array.from({ length: 50 }, (_, i) => ({ op: 'index', id: from + i + 1, body: { w: 'word' + ((from + i) % 97) + ' common', n: from + i }, bulk: true }));
    const outcomes = await shard.writeMany(writes, { schema });
    process.stdout.write(outcomes.map((o) => (o.ok ? 'ack ' + o.value.id : 'err ' + o.error.message)).join('\\n') + '\\n');
  }
}));
`;

it('after a kill, replays no more op-log entries than replayEntriesMax plus one batch, and finds every acknowledged write', async () => {
  const path = join(dir, 'shard');
  // Enough flushes (one per 100 changes) that a slow one finds writes waiting on it.
  const acked = (await killAfterLines(BULK_CHILD, path, ACKS_BEFORE_KILL)).map((line) => {
    expect(line).toMatch(/^ack \d+$/);
    return Number(line.slice(4));
  });

  const shard = await Shard.open({ path, batchEntriesMax: 50, index: { writeBufferOpsMax: 100, replayEntriesMax: 200 } });
  try {
    const { replayedEntries, appliedSeq } = shard.metrics().index;
    // The tail a crash leaves: what the buffers held, under the bound when the last batch was admitted, plus that batch.
    expect(replayedEntries).toBeLessThanOrEqual(200 + 50 - 1);
    expect(appliedSeq).toBe(shard.stats().seq);
    // Every acknowledged document is stored and searchable.
    for (const id of acked) expect(await shard.get(id)).toMatchObject({ id, body: { n: id - 1 } });
    const { total } = await shard.search({ k: 0, countOnly: true });
    expect(total).toBe(shard.stats().documents);
    expect(total).toBeGreaterThanOrEqual(acked.length);
  } finally {
    await shard.close();
  }
});

/** Writes that each bring one field to the schema, one after another: the stored schema grows by a delta per write. */
const SCHEMA_CHILD = `
import { Shard } from ${JSON.stringify(new URL('./index.js', import.meta.url).href)};
const shard = await Shard.open({ path: process.env.SHARD_PATH });
const schema = {};
for (let i = 1; ; i++) {
  schema['f' + i] = { _type: 'keyword' };
  await shard.write({ op: 'index', id: 'd' + (i % 20), body: { ['f' + i]: 'word ' + i }, schema: { ...schema } });
  process.stdout.write(i + '\\n');
}
`;

it('after a kill while the schema grows, the stored schema (base and deltas) is the one of a write at or after the last acknowledged', async () => {
  const path = join(dir, 'shard');
  const lines = await killAfterLines(SCHEMA_CHILD, path, 250);
  const acknowledged = Number(lines[lines.length - 1]);
  const shard = await Shard.open({ path });
  try {
    const fields = Object.keys(shard.indexSchema).length;
    expect(fields).toBeGreaterThanOrEqual(acknowledged);
    const expected: Record<string, unknown> = {};
    for (let i = 1; i <= fields; i++) expected[`f${i}`] = { _type: 'keyword' };
    expect(JSON.stringify(shard.indexSchema)).toBe(JSON.stringify(expected));
  } finally {
    await shard.close();
  }
});
