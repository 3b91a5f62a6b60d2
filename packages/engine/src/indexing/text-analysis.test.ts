import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSchema } from '@tessera/schema';
import { flushWriteBuffer } from '../segments/flush.js';
import { type IndexableDocument, WriteBuffer } from '../segments/write-buffer.js';
import { documentTerms } from './document-terms.js';
import { startTextWorker, stopTextWorker } from './text-analysis.js';

// Text in several fields and namespaces: field and global terms, positions and none, arrays (position gaps),
// a stemmed language (stem terms without positions), non-text values between text values.
const SCHEMA = createSchema({
  _dynamic: false,
  title: { _type: 'text', _index: 'all' },
  body: { _type: 'text', _language: 'en' },
  tags: { _type: 'array/text', _index: 'field_terms' },
  plain: { _type: 'text', _index: 'global_terms', _positions: false },
  section: { _type: 'keyword' },
  size: { _type: 'integer' },
});

const WORDS = ['alpha', 'beta', 'Gamma', 'running', 'runs', 'the', 'of', 'naïve', 'café', 'über', '42', 'x-ray', 'ünïcödé', 'déjà', 'vu'];

function randomText(seed: number, words: number): string {
  let state = seed;
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    out.push(WORDS[state % WORDS.length]!);
  }
  return out.join(seed % 3 === 0 ? ', ' : ' ');
}

function bodies(count: number): Array<Record<string, unknown>> {
  return Array.from({ length: count }, (_, i) => ({
    title: randomText(i + 1, 3 + (i % 5)),
    body: randomText(i * 7 + 3, 10 + (i % 30)),
    tags: [randomText(i + 11, 2), randomText(i + 13, 1), randomText(i + 17, 3)],
    plain: randomText(i * 3 + 5, 6),
    section: `s${i % 4}`,
    size: i * 13,
  }));
}

/** Every (term, position) of a document and its field lengths, whichever way its text was analysed. */
function tokens(doc: IndexableDocument): { tokens: string[]; lengths: Record<string, number> } {
  const out = doc.terms.map((t, i) => `${t}@${doc.positions[i]}`);
  const lengths: Record<string, number> = {};
  for (const { field, length } of doc.fieldLengths ?? []) lengths[field] = (lengths[field] ?? 0) + length;
  if (doc.text !== undefined) {
    expect(doc.text.resolved).toBe(true);
    doc.text.ids.forEach((id, i) => out.push(`${doc.text!.names[id]}@${doc.text!.positions[i]}`));
    for (const [field, length] of doc.text.lengths) lengths[field] = (lengths[field] ?? 0) + length;
  }
  return { tokens: out.sort(), lengths };
}

async function deferred(docs: Array<Record<string, unknown>>, firstId = 1): Promise<IndexableDocument[]> {
  const prepared = docs.map((body, i) => documentTerms(SCHEMA, body, firstId + i, { version: 1, deferText: true }));
  await Promise.all(prepared.map((d) => d.text?.ready));
  return prepared;
}

describe('text analysis on the analysis thread', () => {
  beforeAll(() => startTextWorker());
  afterAll(() => stopTextWorker());

  test('gives every document the terms, positions and field lengths of analysis on the event loop', async () => {
    const docs = bodies(300);
    const inline = docs.map((body, i) => documentTerms(SCHEMA, body, i + 1, { version: 1 }));
    const threaded = await deferred(docs);
    expect(threaded.every((d) => d.text?.dictionary.startsWith('thread') === true)).toBe(true);
    expect(threaded.map(tokens)).toEqual(inline.map(tokens));
  });

  test('a write buffer fed either way flushes into the same segment bytes, across batches and a dictionary the thread already holds', async () => {
    const docs = bodies(200);
    const a = new WriteBuffer();
    const b = new WriteBuffer();
    docs.forEach((body, i) => a.add(i + 1, documentTerms(SCHEMA, body, i + 1, { version: 1 })));
    // Two batches (two event-loop turns): the second meets terms the first added to the thread's dictionary.
    const first = await deferred(docs.slice(0, 120));
    const second = await deferred(docs.slice(120), 121);
    [...first, ...second].forEach((doc, i) => b.add(i + 1, doc));
    expect(Buffer.from(await flushWriteBuffer(b)).equals(Buffer.from(await flushWriteBuffer(a)))).toBe(true);
  });

  test('a document without text values is not deferred', () => {
    const doc = documentTerms(SCHEMA, { section: 'a', size: 1 }, 1, { deferText: true });
    expect(doc.text).toBeUndefined();
  });

  test('when the thread stops, the batches it held are analysed here, with the same terms', async () => {
    // Long enough that the thread is still at work when it is stopped.
    const docs = bodies(2000).map((body, i) => ({ ...body, plain: randomText(i, 400) }));
    const inline = docs.map((body, i) => documentTerms(SCHEMA, body, i + 1, { version: 1 }));
    const prepared = docs.map((body, i) => documentTerms(SCHEMA, body, i + 1, { version: 1, deferText: true }));
    // The batch is sent at the end of this turn; stop the thread right after.
    await new Promise((resolve) => setImmediate(resolve));
    await stopTextWorker();
    await Promise.all(prepared.map((d) => d.text?.ready));
    expect(prepared[0]!.text!.dictionary).toMatch(/^main\./);
    expect(prepared.map(tokens)).toEqual(inline.map(tokens));
    // The next batch starts a new thread, and is analysed here until it is ready; later ones there.
    const meanwhile = await deferred(docs.slice(0, 5));
    expect(meanwhile[0]!.text!.dictionary).toMatch(/^main\./);
    expect(meanwhile.map(tokens)).toEqual(inline.slice(0, 5).map(tokens));
    await startTextWorker();
    const again = await deferred(docs.slice(0, 5));
    expect(again[0]!.text!.dictionary).toMatch(/^thread/);
    expect(again.map(tokens)).toEqual(inline.slice(0, 5).map(tokens));
  });

  test('a write buffer refuses a document whose text is not analysed yet', async () => {
    const doc = documentTerms(SCHEMA, { title: 'x' }, 1, { deferText: true });
    expect(() => new WriteBuffer().add(1, doc)).toThrow(/analysed/);
    await doc.text?.ready;
  });
});

test('an idle analysis thread does not keep the process alive: a script that opens a shard and closes it exits', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-thread-exit-'));
  try {
    // Opening a shard starts the thread, which answers "ready" and then idles; nothing else is left running after close.
    const script = `
      import { Shard } from ${JSON.stringify(new URL('../index.js', import.meta.url).href)};
      const shard = await Shard.open({ path: process.env.SHARD_PATH });
      await shard.close();
      process.stdout.write('closed');
    `;
    // A module file: run with \`-e\`, the same script exited even with the thread left referenced.
    const file = join(dir, 'open-close.mjs');
    await writeFile(file, script);
    const child = spawn(process.execPath, [file], { env: { ...process.env, SHARD_PATH: join(dir, 'shard') }, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    // A hung process is killed after a generous delay: the test then fails on the signal, not on time.
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (c, s) => resolve([c, s])));
    clearTimeout(killer);
    expect(output).toBe('closed');
    expect(signal).toBeNull();
    expect(code).toBe(0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, 30_000);
