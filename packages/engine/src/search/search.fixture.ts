/**
 * Test support for search: a synthetic corpus, an indexer that names every
 * term with @tessera/schema's functions (as the shard's indexing side does),
 * readers built from it (flushed segments plus a live write buffer), and a
 * brute-force oracle over the same documents.
 */
import {
  accuracyTerms, createSchema, fieldSpec, fieldTerm, parseDate, stemTerm, textTerm, type FieldSpec, type Schema,
} from '@tessera/schema';
import { analyzerFor, NO_POSITION } from '../analysis/analyzer.js';
import { Bm25Weight } from '../scorers/bm25.js';
import type { Query } from '@tessera/search-model';
import { flushWriteBuffer } from '../segments/flush.js';
import { SegmentReader } from '../segments/segment-reader.js';
import { WriteBuffer, type IndexableDocument } from '../segments/write-buffer.js';
import { idTerm } from './compile.js';
import type { SearchReader } from './reader.js';

export const SCHEMA: Schema = createSchema({
  _id: { _type: 'integer' },
  body: { _type: 'text' },
  title: { _type: 'text', _language: 'en' },
  tag: { _type: 'array/keyword' },
  n: { _type: 'integer' },
  when: { _type: 'date' },
  approx: { _type: 'integer', _index: 'field_terms' },
});

export interface Doc {
  readonly docid: number;
  readonly body: string;
  readonly title?: string;
  readonly tags: readonly string[];
  readonly n?: number;
  /** Epoch seconds. */
  readonly when?: number;
  readonly approx?: number;
}

export const VOCABULARY = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa', 'lambda', 'mu'];
export const TAGS = ['Red', 'green', 'blue', 'Blue', 'cyan'];
export const DAY_SECONDS = 86400;
export const EPOCH_2020 = 1577836800;

/** A deterministic pseudo-random generator (mulberry32). */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` documents with docids 1..count; word frequencies skewed (Zipf-like) so idf varies. */
export function makeDocs(count: number, seed = 1): Doc[] {
  const rnd = random(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.pow(rnd(), 1.6) * xs.length)]!;
  const docs: Doc[] = [];
  for (let docid = 1; docid <= count; docid++) {
    const words: string[] = [];
    const length = 1 + Math.floor(rnd() * 12);
    for (let i = 0; i < length; i++) words.push(pick(VOCABULARY));
    const tags: string[] = [];
    const tagCount = Math.floor(rnd() * 3);
    for (let i = 0; i < tagCount; i++) tags.push(TAGS[Math.floor(rnd() * TAGS.length)]!);
    docs.push({
      docid,
      body: words.join(' '),
      tags,
      ...(rnd() < 0.85 ? { n: Math.floor(rnd() * 1000) - 100 } : {}),
      ...(rnd() < 0.9 ? { when: EPOCH_2020 + Math.floor(rnd() * 400) * DAY_SECONDS + Math.floor(rnd() * DAY_SECONDS) } : {}),
      ...(rnd() < 0.9 ? { approx: Math.floor(rnd() * 5000) } : {}),
    });
  }
  return docs;
}

function spec(path: string): FieldSpec {
  return fieldSpec(SCHEMA, path)!;
}

/** Index one document the way the shard's indexer names terms, lengths and values. */
export function indexDocument(doc: Doc): IndexableDocument {
  const terms: string[] = [];
  const positions: number[] = [];
  const add = (term: string, position: number): void => {
    terms.push(term);
    positions.push(position);
  };
  const fieldLengths: { field: string; length: number }[] = [];
  const numbers: { slot: number; values: number[] }[] = [{ slot: 0, values: [doc.docid] }];
  const strings: { slot: number; values: string[] }[] = [];
  const text = (path: string, value: string): void => {
    const s = spec(path);
    const analyzer = analyzerFor({ language: s.language, stemStrategy: s.stemStrategy, stopStrategy: s.stopStrategy });
    const length = analyzer.analyze(value, (token, position, z) => add(z ? stemTerm(s.prefix, token) : textTerm(s.prefix, token), position));
    fieldLengths.push({ field: s.prefix, length });
    strings.push({ slot: s.slot, values: [value] });
  };
  text('body', doc.body);
  if (doc.title !== undefined) text('title', doc.title);
  add(idTerm('integer', doc.docid), NO_POSITION);
  if (doc.tags.length > 0) {
    const s = spec('tag');
    for (const tag of doc.tags) add(fieldTerm(s, tag), NO_POSITION);
    strings.push({ slot: s.slot, values: [...doc.tags] });
  }
  for (const path of ['n', 'when', 'approx'] as const) {
    const v = doc[path];
    if (v === undefined) continue;
    const s = spec(path);
    add(fieldTerm(s, v), NO_POSITION);
    for (const t of accuracyTerms(s, v)) add(t, NO_POSITION);
    if (s.index.fieldValues) numbers.push({ slot: s.slot, values: [v] });
  }
  return { terms, positions, fieldLengths, numbers, strings };
}

/** Readers over `docs`: the first parts flushed into segments, the last part left in a write buffer. */
export async function buildReaders(docs: readonly Doc[], parts = 3): Promise<SearchReader[]> {
  const readers: SearchReader[] = [];
  const size = Math.ceil(docs.length / parts);
  for (let p = 0; p < parts; p++) {
    const buffer = new WriteBuffer();
    for (const doc of docs.slice(p * size, (p + 1) * size)) buffer.add(doc.docid, indexDocument(doc));
    if (p < parts - 1) {
      buffer.freeze();
      readers.push(new SegmentReader(p + 1, await flushWriteBuffer(buffer)));
    } else {
      readers.push(buffer);
    }
  }
  return readers;
}

// ---- the oracle ----------------------------------------------------------

export interface OracleMatch {
  readonly match: boolean;
  readonly score: number;
}

const NO: OracleMatch = { match: false, score: 0 };
const YES: OracleMatch = { match: true, score: 0 };

/** Body tokens of a document (the generator's bodies are lower-case words separated by spaces). */
function bodyTokens(doc: Doc): string[] {
  return doc.body.split(' ');
}

/**
 * Evaluates the subset of queries the property test generates, directly on
 * documents: body words (BM25 over the live documents), body phrases, tag
 * equality, `n` equality and ranges, `when` ranges, compound operators.
 */
export class Oracle {
  private readonly documents: number;
  private readonly averageLength: number;
  private readonly df = new Map<string, number>();

  constructor(docs: readonly Doc[]) {
    this.documents = docs.length;
    let sum = 0;
    for (const d of docs) {
      const tokens = bodyTokens(d);
      sum += tokens.length;
      for (const t of new Set(tokens)) this.df.set(t, (this.df.get(t) ?? 0) + 1);
    }
    this.averageLength = docs.length === 0 ? 0 : sum / docs.length;
  }

  eval(q: Query, doc: Doc): OracleMatch {
    switch (q.kind) {
      case 'all':
        return YES;
      case 'none':
        return NO;
      case 'bool':
        return this.bool(q.op, q.children.map((c) => this.eval(c, doc)));
      case 'field':
        return this.leaf(q, doc);
    }
  }

  private bool(op: string, r: OracleMatch[]): OracleMatch {
    const matched = r.filter((x) => x.match);
    const sum = (xs: OracleMatch[]): number => xs.reduce((s, x) => s + x.score, 0);
    switch (op) {
      case 'and':
        return matched.length === r.length ? { match: true, score: sum(r) } : NO;
      case 'or':
      case 'elite_set':
      case 'synonym':
        return matched.length > 0 ? { match: true, score: sum(matched) } : NO;
      case 'max':
        return matched.length > 0 ? { match: true, score: Math.max(...matched.map((x) => x.score)) } : NO;
      case 'xor':
        return matched.length % 2 === 1 ? { match: true, score: sum(matched) } : NO;
      case 'not':
        return matched.length === 0 ? YES : NO;
      case 'and_not':
        return r[0]!.match && !r.slice(1).some((x) => x.match) ? r[0]! : NO;
      case 'and_maybe':
        return r[0]!.match ? { match: true, score: r[0]!.score + sum(r.slice(1).filter((x) => x.match)) } : NO;
      case 'filter':
        return r.every((x) => x.match) ? { match: true, score: r[0]!.score } : NO;
      default:
        throw new Error(`oracle: unsupported op ${op}`);
    }
  }

  private leaf(q: Extract<Query, { kind: 'field' }>, doc: Doc): OracleMatch {
    const path = q.path!.join('.');
    const v = q.value;
    if (path === 'body' && v.kind === 'string') {
      const words = v.value.replace(/"/g, '').split(' ').filter((w) => w.length > 0);
      if (v.text.kind === 'phrase') return this.phrase(words, doc);
      return this.bool('or', words.map((w) => this.word(w.toLowerCase(), doc)));
    }
    if (path === 'tag' && v.kind === 'string') return doc.tags.some((t) => t.toLowerCase() === v.value.toLowerCase()) ? YES : NO;
    if (path === 'n' || path === 'when') {
      const value = doc[path];
      if (value === undefined) return NO;
      const convert = (x: string | number | null, open: number): number => (x === null ? open : path === 'when' ? parseDate(x) : Number(x));
      if (v.kind === 'scalar') return value === v.value ? YES : NO;
      if (v.kind === 'range') return value >= convert(v.from, -Infinity) && value <= convert(v.to, Infinity) ? YES : NO;
      if (v.kind === 'exists') return YES;
    }
    throw new Error(`oracle: unsupported leaf ${JSON.stringify(q)}`);
  }

  private word(token: string, doc: Doc): OracleMatch {
    const tokens = bodyTokens(doc);
    const tf = tokens.filter((t) => t === token).length;
    if (tf === 0) return NO;
    const bm25 = new Bm25Weight({ documents: this.documents, termFrequency: this.df.get(token) ?? 0, averageLength: this.averageLength });
    return { match: true, score: bm25.score(tf, tokens.length) };
  }

  private phrase(words: readonly string[], doc: Doc): OracleMatch {
    const tokens = bodyTokens(doc);
    const lower = words.map((w) => w.toLowerCase());
    for (let p = 0; p + lower.length <= tokens.length; p++) {
      if (lower.every((w, i) => tokens[p + i] === w)) {
        return { match: true, score: lower.reduce((s, w) => s + this.word(w, doc).score, 0) };
      }
    }
    return NO;
  }
}
