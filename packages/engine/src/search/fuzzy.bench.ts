/**
 * Benchmark (prints, never asserts): fuzzy expansion on the Debian corpus's
 * text dictionary. The pruned walk of fuzzy.ts (rows shared along the
 * sorted dictionary, band of width 2N + 1, dead prefixes skipped or sought
 * past) against a full optimal-string-alignment matrix per term of the field
 * (talisman's damerau-levenshtein), on one segment and on the write buffer
 * holding the same terms (walked unsorted: sorting them per query cost more
 * than the walk). Queries: corpus words of 4–12 letters drawn with a fixed
 * seed, each with one random typo, at distances 1 and 2. Run from the repo
 * root after `npx tsc -b`:
 *   node packages/engine/dist/search/fuzzy.bench.js
 */
import { execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import damerauLevenshtein from 'talisman/metrics/damerau-levenshtein.js';
import { flushWriteBuffer } from '../segments/flush.js';
import { SegmentReader } from '../segments/segment-reader.js';
import { WriteBuffer, type IndexableDocument } from '../segments/write-buffer.js';
import { expandFuzzy } from './fuzzy.js';
import { random } from './search.fixture.js';

interface Package { package: string; summary?: string; description?: string }

const CORPUS = resolve(process.cwd(), '../shared/data/debian-packages.ndjson.gz');
const TOKEN = /[\p{L}\p{N}]+/gu;
const BASE = 'text.S';
const QUERIES = 200;
/** The full-matrix baseline is ~30× slower: measured on the first queries only. */
const BASELINE_QUERIES = 20;

function tokenise(p: Package): IndexableDocument {
  const text = `${p.package} ${p.summary ?? ''} ${p.description ?? ''}`.toLowerCase();
  const terms: string[] = [];
  const positions: number[] = [];
  for (const m of text.matchAll(TOKEN)) {
    positions.push(terms.length);
    terms.push(BASE + m[0]);
  }
  return { terms, positions, fieldLengths: [{ field: 'text.', length: terms.length }] };
}

/** One typo: a substitution, deletion, insertion or transposition at a random place. */
function typo(word: string, rnd: () => number): string {
  const i = Math.floor(rnd() * word.length);
  const letter = String.fromCharCode(97 + Math.floor(rnd() * 26));
  switch (Math.floor(rnd() * 4)) {
    case 0: return word.slice(0, i) + letter + word.slice(i + 1);
    case 1: return word.slice(0, i) + word.slice(i + 1);
    case 2: return word.slice(0, i) + letter + word.slice(i);
    default: return i + 1 < word.length ? word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2) : letter + word;
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.round((p / 100) * (sorted.length - 1)))]!;
}

function report(name: string, timesUs: number[], found: number): void {
  const sorted = [...timesUs].sort((a, b) => a - b);
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  console.log(`| ${name} | ${mean.toFixed(0)} | ${percentile(sorted, 50).toFixed(0)} | ${percentile(sorted, 99).toFixed(0)} | ${found} |`);
}

async function main(): Promise<void> {
  let commit = 'unknown';
  try { commit = execSync('git rev-parse --short HEAD', { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim(); } catch { /* not a checkout */ }
  const packages = gunzipSync(readFileSync(CORPUS)).toString('utf8').split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l) as Package);
  const buffer = new WriteBuffer();
  for (let i = 0; i < packages.length; i++) buffer.add(i + 1, tokenise(packages[i]!));
  buffer.freeze();
  const segment = new SegmentReader(1, await flushWriteBuffer(buffer));
  const live = new WriteBuffer();
  for (let i = 0; i < packages.length; i++) live.add(i + 1, tokenise(packages[i]!));
  const dictionary = live.termsWithPrefix(BASE).map((t) => t.slice(BASE.length));
  console.log(`node ${process.version}, commit ${commit}; ${packages.length} documents, ${dictionary.length} text terms`);

  const rnd = random(7);
  const candidates = dictionary.filter((w) => w.length >= 4 && w.length <= 12 && /^[a-z]+$/.test(w));
  const queries = Array.from({ length: QUERIES }, () => typo(candidates[Math.floor(rnd() * candidates.length)]!, rnd));

  console.log('\n| expansion (µs per query word) | mean | p50 | p99 | terms found |');
  console.log('|---|---|---|---|---|');
  for (const distance of [1, 2]) {
    const walk: number[] = [];
    const walkBuffer: number[] = [];
    const full: number[] = [];
    let foundWalk = 0;
    let foundBuffer = 0;
    let foundBaselineWalk = 0;
    let foundFull = 0;
    for (let i = 0; i < queries.length; i++) {
      const q = queries[i]!;
      let t = process.hrtime.bigint();
      const found = expandFuzzy([segment], BASE, q, distance, Infinity).length;
      walk.push(Number(process.hrtime.bigint() - t) / 1000);
      foundWalk += found;
      t = process.hrtime.bigint();
      foundBuffer += expandFuzzy([live], BASE, q, distance, Infinity).length;
      walkBuffer.push(Number(process.hrtime.bigint() - t) / 1000);
      if (i >= BASELINE_QUERIES) continue;
      foundBaselineWalk += found;
      t = process.hrtime.bigint();
      const cursor = segment.terms(BASE);
      while (cursor.next()) if (damerauLevenshtein(q, cursor.term().slice(BASE.length)) <= distance) foundFull++;
      full.push(Number(process.hrtime.bigint() - t) / 1000);
    }
    report(`N=${distance}, segment, pruned walk`, walk, foundWalk);
    report(`N=${distance}, write buffer, walk in add order`, walkBuffer, foundBuffer);
    report(`N=${distance}, segment, full matrix per term (first ${BASELINE_QUERIES}; walk found ${foundBaselineWalk})`, full, foundFull);
  }
}

await main();
