/**
 * Benchmark (prints, never asserts): does the JSON fast path — UTF-8 check,
 * depth pre-scan, JSON.parse, key walk — stay within 2× of bare JSON.parse on
 * real documents? Runs on the first 5,000 Debian package records of
 * ../shared/data/ (ENGINE.md's codecs figures use the same set).
 *
 *   npx tsc -b packages/http && node packages/http/dist/codecs/json-decode.bench.js
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { decodeBody } from './decode.js';
import { scanJsonDepth } from './json-depth.js';
import { DEFAULT_DECODE_LIMITS } from './limits.js';
import { checkDecodedValue } from './value-check.js';

const DOCS = 5000;
const ROUNDS = 20;

function loadDocs(): Buffer[] {
  const file = [resolve(process.cwd(), '../shared/data/debian-packages.ndjson.gz')].find((f) => existsSync(f));
  if (file === undefined) throw new Error('debian-packages.ndjson.gz not found under ../shared/data/');
  const lines = gunzipSync(readFileSync(file)).toString('utf8').split('\n', DOCS);
  return lines.filter((l) => l !== '').map((l) => Buffer.from(l, 'utf8'));
}

interface Case {
  label: string;
  run: (doc: Buffer) => unknown;
  bestNs: number;
}

/** Rounds interleave the cases, so load on the machine hits them alike; the best round of each counts. */
function measure(docs: Buffer[], cases: Case[]): void {
  let sink = 0;
  for (let r = 0; r < ROUNDS; r++) {
    for (const c of cases) {
      const start = process.hrtime.bigint();
      for (const doc of docs) if (c.run(doc) !== undefined) sink++;
      c.bestNs = Math.min(c.bestNs, Number(process.hrtime.bigint() - start));
    }
  }
  if (sink === 0) throw new Error('nothing decoded');
}

const docs = loadDocs();
const texts = docs.map((d) => d.toString('utf8'));
const bytes = docs.reduce((n, d) => n + d.length, 0);
const byText = new Map(docs.map((d, i) => [d, texts[i] as string]));
const parsed = new Map(docs.map((d, i) => [d, JSON.parse(texts[i] as string) as unknown]));
const utf8 = new TextDecoder('utf-8', { fatal: true });
const cases: Case[] = [
  { label: 'JSON.parse(string)', run: (d) => JSON.parse(byText.get(d) as string), bestNs: Infinity },
  { label: 'JSON.parse(buffer.toString())', run: (d) => JSON.parse(d.toString('utf8')), bestNs: Infinity },
  { label: 'TextDecoder fatal only', run: (d) => utf8.decode(d), bestNs: Infinity },
  { label: 'scanJsonDepth only', run: (d) => { scanJsonDepth(byText.get(d) as string, 128); return 1; }, bestNs: Infinity },
  { label: 'checkDecodedValue only (pre-parsed)', run: (d) => { checkDecodedValue(parsed.get(d), DEFAULT_DECODE_LIMITS, Infinity, 'JSON'); return 1; }, bestNs: Infinity },
  { label: 'decodeBody(buffer, application/json)', run: (d) => decodeBody(d, 'application/json', DEFAULT_DECODE_LIMITS), bestNs: Infinity },
];
measure(docs, cases);
console.log(`node ${process.version}, ${docs.length} Debian records, ${(bytes / 1e6).toFixed(1)} MB, best of ${ROUNDS} interleaved rounds`);
for (const c of cases) {
  const seconds = c.bestNs / 1e9;
  console.log(`${c.label.padEnd(40)} ${(docs.length / seconds / 1000).toFixed(0).padStart(6)}k docs/s ${(bytes / seconds / 1e6).toFixed(0).padStart(6)} MB/s`);
}
const [bare, bareBytes, , , , fast] = cases.map((c) => c.bestNs) as [number, number, number, number, number, number];
console.log(`fast path / JSON.parse(string): ${(fast / bare).toFixed(2)}×; / JSON.parse(buffer.toString()): ${(fast / bareBytes).toFixed(2)}×`);
