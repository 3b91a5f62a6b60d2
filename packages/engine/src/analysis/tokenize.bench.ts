/**
 * How fast do `tokenize` and `Analyzer.analyze` (english, stem_some,
 * stop_stemmed) run on real text? Prints MB/s and tokens/s on the package,
 * summary and description of the Debian corpus; never asserts.
 *
 * Run from the repository root: `node packages/engine/dist/analysis/tokenize.bench.js`
 * (the corpus is resolved as `../shared/data/debian-packages.ndjson.gz`
 * relative to the working directory). The regex baseline is the tokenizer
 * ENGINE.md measured (104 MB/s), for comparison on this machine.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { analyzerFor } from './analyzer.js';
import { tokenize } from './tokenize.js';

const CORPUS_PATH = resolve(process.cwd(), '../shared/data/debian-packages.ndjson.gz');
const ROUNDS = 5;

const texts: string[] = [];
for (const line of gunzipSync(readFileSync(CORPUS_PATH)).toString('utf8').split('\n')) {
  if (line.length === 0) continue;
  const doc = JSON.parse(line) as Record<string, unknown>;
  for (const key of ['package', 'summary', 'description']) {
    const value = doc[key];
    if (typeof value === 'string') texts.push(value);
  }
}
const bytes = texts.reduce((sum, text) => sum + Buffer.byteLength(text, 'utf8'), 0);

function measure(name: string, run: () => number): void {
  run(); // warm-up
  let best = Infinity;
  let count = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.hrtime.bigint();
    count = run();
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    if (seconds < best) best = seconds;
  }
  console.log(`${name.padEnd(36)} ${(bytes / best / 1e6).toFixed(1).padStart(7)} MB/s ${(count / best / 1e6).toFixed(2).padStart(6)} M items/s  (${count} items, best of ${ROUNDS})`);
}

let sink = 0;
const consume = (token: string): void => { sink += token.length; };

measure('regex exec + toLowerCase (baseline)', () => {
  const re = /[\p{L}\p{N}\p{M}]+/gu;
  let n = 0;
  for (const text of texts) {
    const lower = text.toLowerCase();
    re.lastIndex = 0;
    for (let m = re.exec(lower); m !== null; m = re.exec(lower)) { consume(m[0]); n++; }
  }
  return n;
});
measure('tokenize', () => {
  let n = 0;
  for (const text of texts) n += tokenize(text, consume);
  return n;
});
const analyzer = analyzerFor({ language: 'english', stemStrategy: 'stem_some', stopStrategy: 'stop_stemmed' });
measure('analyze english stem_some (terms)', () => {
  let n = 0;
  for (const text of texts) analyzer.analyze(text, (term) => { sink += term.length; n++; });
  return n;
});
console.log(`corpus: ${texts.length} texts, ${(bytes / 1e6).toFixed(1)} MB; node ${process.version}; checksum ${sink}`);
