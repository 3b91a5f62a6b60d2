/**
 * Benchmark (prints, never asserts) of the indexing path on the Debian corpus:
 * tokenise → WriteBuffer.add → flush → LevelDB (SegmentStore) → reopen, then
 * postings decode and advance() rates and a merge. Run from the repo root:
 *   node packages/engine/dist/segments/segments.bench.js
 * The tokenizer is a plain lower-cased `/[\p{L}\p{N}]+/gu` (the real analyzer
 * lives in analysis/); terms are named `text.S<token>` plus `section.K<section>`.
 */
import { execSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { gunzipSync } from 'node:zlib';
import { ClassicLevel } from 'classic-level';
import { NO_MORE_DOCS } from '../postings/constants.js';
import { PostingsIterator } from '../postings/postings-iterator.js';
import { flushWriteBuffer } from './flush.js';
import { mergeSegments } from './merge.js';
import { SegmentReader } from './segment-reader.js';
import { SegmentStore, type SegmentDatabase } from './segment-store.js';
import { NO_TOKEN_POSITION, WriteBuffer, type IndexableDocument } from './write-buffer.js';

interface Package { package: string; summary?: string; description?: string; section?: string; installed_size?: number }

const CORPUS = resolve(process.cwd(), '../shared/data/debian-packages.ndjson.gz');
const TOKEN = /[\p{L}\p{N}]+/gu;

function tokenise(p: Package): IndexableDocument {
  const text = `${p.package} ${p.summary ?? ''} ${p.description ?? ''}`.toLowerCase();
  const terms: string[] = [];
  const positions: number[] = [];
  for (const m of text.matchAll(TOKEN)) {
    positions.push(terms.length);
    terms.push(`text.S${m[0]}`);
  }
  const length = terms.length;
  if (p.section !== undefined) {
    terms.push(`section.K${p.section}`);
    positions.push(NO_TOKEN_POSITION);
  }
  return {
    terms,
    positions,
    fieldLengths: [{ field: 'text', length }],
    ...(p.installed_size === undefined ? {} : { numbers: [{ slot: 0, values: [p.installed_size] }] }),
    ...(p.section === undefined ? {} : { strings: [{ slot: 1, values: [p.section] }] }),
  };
}

function ms(start: number): number {
  return performance.now() - start;
}

function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

async function main(): Promise<void> {
  let commit = 'unknown';
  try { commit = execSync('git rev-parse --short HEAD', { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim(); } catch { /* not a checkout */ }
  console.log(`node ${process.version}, commit ${commit}, corpus ${CORPUS}`);
  const packages = gunzipSync(readFileSync(CORPUS)).toString('utf8').split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l) as Package);
  const n = packages.length;
  console.log(`docs: ${fmt(n)}`);

  // Tokenising alone.
  let t = performance.now();
  let tokens = 0;
  for (const p of packages) tokens += tokenise(p).fieldLengths![0]!.length;
  const tokeniseMs = ms(t);
  console.log(`tokenise only:            ${fmt(tokeniseMs)} ms, ${fmt(n / (tokeniseMs / 1000))} docs/s, ${fmt(tokens)} tokens`);

  // Tokenise + WriteBuffer.add (with positions, norms, two value slots).
  globalThis.gc?.();
  // The buffer's pools are ArrayBuffers, outside the JS heap: count both.
  const heapBefore = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
  const buffer = new WriteBuffer();
  t = performance.now();
  for (let i = 0; i < n; i++) buffer.add(i + 1, tokenise(packages[i]!));
  const addMs = ms(t);
  globalThis.gc?.();
  const heapAfter = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
  console.log(`tokenise + buffer.add:    ${fmt(addMs)} ms, ${fmt(n / (addMs / 1000))} docs/s; ${fmt(buffer.termCount)} terms`);
  console.log(`buffer memory: estimate ${fmt(buffer.memoryBytes() / 2 ** 20, 1)} MiB, heap + array buffers growth ${fmt((heapAfter - heapBefore) / 2 ** 20, 1)} MiB${globalThis.gc === undefined ? ' (run with --expose-gc for a precise figure)' : ''}`);

  // Flush, with the event loop's worst delay while it runs.
  buffer.freeze();
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  t = performance.now();
  const bytes = await flushWriteBuffer(buffer);
  const flushMs = ms(t);
  delay.disable();
  console.log(`flush:                    ${fmt(flushMs)} ms, segment ${fmt(bytes.length / 2 ** 20, 2)} MiB; worst event-loop delay ${fmt(delay.max / 1e6, 1)} ms`);

  const path = await mkdtemp(join(tmpdir(), 'tessera-bench-'));
  const db: SegmentDatabase = new ClassicLevel<Buffer, Buffer>(path, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  await db.open();
  try {
    let store = await SegmentStore.open(db);
    t = performance.now();
    const reader = await store.addSegment(bytes, n, undefined, true);
    const storeMs = ms(t);
    console.log(`store in LevelDB (sync):  ${fmt(storeMs)} ms`);
    const totalMs = addMs + flushMs + storeMs;
    console.log(`INDEXING PATH (tokenise + add + flush + durable store): ${fmt(totalMs)} ms = ${fmt(n / (totalMs / 1000))} docs/s`);
    console.log(`  vs Xapian 5,750 docs/s: ×${fmt(n / (totalMs / 1000) / 5750, 1)}; target ≥ 17,250 docs/s (3× Xapian); ENGINE.md in-memory postings without positions: 57k docs/s`);
    await db.compactRange(Buffer.of(0x00), Buffer.of(0xff));
    const diskBytes = Number(execSync(`du -sb ${path}`).toString().split('\t')[0]);
    console.log(`on disk: ${fmt(diskBytes / 2 ** 20, 1)} MiB (LevelDB directory after compaction; budget ≤ 176 MB)`);
    const sections = reader.header;
    console.log(`  sections: postings ${fmt(sections.postings[1] / 2 ** 20, 2)} MiB, positions ${fmt(sections.positions[1] / 2 ** 20, 2)} MiB, dictionary ${fmt(sections.dictionary[1] / 2 ** 20, 2)} MiB, docids ${fmt(sections.docids[1] / 2 ** 20, 2)} MiB`);

    t = performance.now();
    store = await SegmentStore.open(db);
    console.log(`reopen (manifest + getMany + views): ${fmt(ms(t), 1)} ms`);
    const segment = store.readers[0]!;

    // Postings decode rate: every term, every posting, next() only.
    const it = new PostingsIterator();
    const names: string[] = [];
    for (const ti = segment.terms(''); ti.next();) names.push(ti.term());
    let postings = 0;
    let checksum = 0;
    t = performance.now();
    for (const ti = segment.terms(''); ti.next();) {
      it.reset(segment, ti.info);
      for (let d = it.next(); d !== NO_MORE_DOCS; d = it.next()) { postings++; checksum += it.freq; }
    }
    let took = ms(t);
    console.log(`decode (next, all terms): ${fmt(postings)} postings in ${fmt(took)} ms = ${fmt(postings / (took / 1000) / 1e6, 1)} M postings/s`);
    t = performance.now();
    let positionsRead = 0;
    for (const ti = segment.terms('text.'); ti.next();) {
      it.reset(segment, ti.info);
      for (let d = it.next(); d !== NO_MORE_DOCS; d = it.next()) { const p = it.positions(); checksum += p[0]!; positionsRead += it.freq; }
    }
    took = ms(t);
    console.log(`decode with positions:    ${fmt(positionsRead)} positions in ${fmt(took)} ms = ${fmt(positionsRead / (took / 1000) / 1e6, 1)} M positions/s`);

    // advance(): the 20 most frequent terms, random ascending targets.
    const frequent = names.map((name) => ({ name, df: segment.termInfo(name)!.df })).sort((a, b) => b.df - a.df).slice(0, 20);
    for (const stride of [2, 16, 256]) {
      let advances = 0;
      t = performance.now();
      for (const { name } of frequent) {
        for (let round = 0; round < 10; round++) {
          segment.postingsIterator(name, it);
          let target = 1 + ((round * 7919) % stride);
          while (it.advance(target) !== NO_MORE_DOCS) { advances++; target = it.docid + 1 + ((target * 2654435761) >>> 0) % stride; }
        }
      }
      took = ms(t);
      console.log(`advance (stride ≤ ${stride}):  ${fmt(advances)} calls in ${fmt(took)} ms = ${fmt(advances / (took / 1000) / 1e6, 1)} M advances/s`);
    }

    // Merge: 4 segments of a quarter of the corpus each (10% of docs then deleted) → 1.
    const quarters: SegmentReader[] = [];
    const chunk = Math.ceil(n / 4);
    for (let q = 0; q < 4; q++) {
      const b = new WriteBuffer();
      for (let i = q * chunk; i < Math.min(n, (q + 1) * chunk); i++) b.add(i + 1, tokenise(packages[i]!));
      b.freeze();
      quarters.push(new SegmentReader(1000 + q, await flushWriteBuffer(b)));
    }
    for (let d = 1; d <= n; d += 10) for (const r of quarters) r.delete(d);
    delay.reset();
    delay.enable();
    t = performance.now();
    const merged = await mergeSegments(quarters);
    const mergeMs = ms(t);
    delay.disable();
    console.log(`merge 4 → 1 (${fmt(n)} docs, 10% deleted): ${fmt(mergeMs)} ms = ${fmt(n / (mergeMs / 1000))} docs/s, ${fmt(merged.length / 2 ** 20, 2)} MiB; worst event-loop delay ${fmt(delay.max / 1e6, 1)} ms`);
    console.log(`checksum ${checksum}`);
  } finally {
    await db.close();
    await rm(path, { recursive: true, force: true });
  }
}

await main();
