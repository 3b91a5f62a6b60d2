/**
 * search() against a brute-force oracle over the same synthetic documents
 * (search.fixture.ts): random DSL queries (body words and phrases, tags,
 * numbers, date ranges, compound operators) and random sorts over two
 * segments and a write buffer. Same total; same hits in the same order,
 * where weights are compared with a tolerance (the engine sums weights in
 * heap order, the oracle in query order) and sort values exactly.
 */
import fc from 'fast-check';
import { parseQuery, parseSort, type Query, type SortKey } from '@tessera/search-model';
import { compareSortValues, type SortValue } from '@tessera/search-model';
import { search, sortPlan, type SearchHit, type SearchReader } from './index.js';
import { flushWriteBuffer } from '../segments/flush.js';
import { SegmentReader } from '../segments/segment-reader.js';
import { WriteBuffer } from '../segments/write-buffer.js';
import { buildReaders, DAY_SECONDS, indexDocument, random, EPOCH_2020, makeDocs, Oracle, SCHEMA, TAGS, VOCABULARY, type Doc } from './search.fixture.js';

const EPSILON = 1e-9;

const word = fc.constantFrom(...VOCABULARY);
const dateString = fc.integer({ min: -10, max: 410 }).map((d) => new Date((EPOCH_2020 + d * DAY_SECONDS) * 1000).toISOString().slice(0, 10));

const leafArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: word.map((w) => ({ body: w })) },
  { weight: 2, arbitrary: fc.array(word, { minLength: 2, maxLength: 3 }).map((ws) => ({ body: ws.join(' ') })) },
  { weight: 1, arbitrary: fc.array(word, { minLength: 2, maxLength: 2 }).map((ws) => ({ body: `"${ws.join(' ')}"` })) },
  { weight: 2, arbitrary: fc.constantFrom(...TAGS, 'RED', 'magenta').map((t) => ({ tag: t })) },
  { weight: 1, arbitrary: fc.integer({ min: -100, max: 900 }).map((n) => ({ n })) },
  { weight: 3, arbitrary: fc.tuple(fc.option(fc.integer({ min: -150, max: 950 })), fc.option(fc.integer({ min: -150, max: 950 })))
    .map(([a, b]) => ({ n: { _in: { _range: { ...(a === null ? {} : { _from: a }), ...(b === null ? {} : { _to: b }) } } } })) },
  { weight: 2, arbitrary: fc.tuple(dateString, dateString).map(([a, b]) => ({ when: { _in: `${a}..${b}` } })) },
  { weight: 1, arbitrary: fc.constant({ n: '*' }) },
);

const OPS = ['_and', '_or', '_not', '_and_not', '_xor', '_and_maybe', '_filter', '_max'];

const queryArb: fc.Arbitrary<unknown> = fc.letrec<{ q: unknown }>((tie) => ({
  q: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leafArb,
    fc.tuple(fc.constantFrom(...OPS), fc.array(tie('q'), { minLength: 1, maxLength: 3 })).map(([op, children]) => ({ [op]: children })),
  ),
})).q;

const sortArb = fc.constantFrom<unknown>(undefined, 'n', '-n', 'tag', '-tag', '-when', ['tag', '-n'], '_score', '-_score', ['-n', 'when'], 'unknown');

interface Expected {
  docid: number;
  score: number;
  values: SortValue[];
}

/** The oracle's ordering of all matches, with the same keys the engine resolves. */
function expected(docs: readonly Doc[], oracle: Oracle, query: Query, sort: SortKey[]): { total: number; ranked: Expected[] } {
  const plans = sort.map((k) => sortPlan(k, SCHEMA));
  const matches: Expected[] = [];
  for (const doc of docs) {
    const r = oracle.eval(query, doc);
    if (!r.match) continue;
    const values = sort.map((key, i): SortValue => {
      const plan = plans[i]!;
      if (plan.kind === 'score') return r.score;
      if (plan.kind === 'ignored') return null;
      const all: Array<number | string> = key.path === 'tag' ? [...doc.tags] : key.path === 'n' ? (doc.n === undefined ? [] : [doc.n]) : doc.when === undefined ? [] : [doc.when];
      if (all.length === 0) return null;
      const ordered = [...all].sort((a, b) => compareSortValues(a, b, 'asc'));
      return key.order === 'asc' ? ordered[0]! : ordered[ordered.length - 1]!;
    });
    matches.push({ docid: doc.docid, score: r.score, values });
  }
  const relevanceOnly = plans.every((p) => p.kind === 'ignored' || (p.kind === 'score' && p.order === 'asc'));
  matches.sort((a, b) => {
    if (!relevanceOnly) {
      for (let i = 0; i < plans.length; i++) {
        const plan = plans[i]!;
        if (plan.kind === 'score') {
          if (Math.abs(a.score - b.score) > EPSILON) return (plan.order === 'asc') === (a.score > b.score) ? -1 : 1;
        } else if (plan.kind === 'slot') {
          const c = compareSortValues(a.values[i]!, b.values[i]!, plan.order);
          if (c !== 0) return c;
        }
      }
    }
    return Math.abs(a.score - b.score) > EPSILON ? b.score - a.score : a.docid - b.docid;
  });
  return { total: matches.length, ranked: matches };
}

/**
 * Hits equal the oracle's ranking up to weights within EPSILON: the same
 * count, at each rank the same sort values and (nearly) the same weight, and
 * every hit's own weight and values are what the oracle gives that document.
 */
function check(hits: SearchHit[], ranked: Expected[], k: number): void {
  expect(hits.length).toBe(Math.min(k, ranked.length));
  const byDocid = new Map(ranked.map((e) => [e.docid, e]));
  const seen = new Set<number>();
  hits.forEach((hit, i) => {
    const want = ranked[i]!;
    const own = byDocid.get(hit.docid);
    expect(own).toBeDefined();
    expect(seen.has(hit.docid)).toBe(false);
    seen.add(hit.docid);
    expect(Math.abs(hit.score - own!.score)).toBeLessThanOrEqual(EPSILON);
    expect(Math.abs(hit.score - want.score)).toBeLessThanOrEqual(EPSILON);
    if (hit.sortValues !== undefined) {
      hit.sortValues.forEach((v, j) => {
        if (typeof v === 'number' && typeof want.values[j] === 'number') expect(Math.abs(v - (want.values[j] as number))).toBeLessThanOrEqual(EPSILON);
        else expect(v).toEqual(want.values[j]);
      });
    }
    // Where weights differ clearly, the docid at this rank is the oracle's.
    const tieBefore = i > 0 && Math.abs(ranked[i - 1]!.score - want.score) <= EPSILON;
    const tieAfter = i + 1 < ranked.length && Math.abs(ranked[i + 1]!.score - want.score) <= EPSILON;
    if (!tieBefore && !tieAfter) expect(hit.docid).toBe(want.docid);
  });
}

describe('search against a brute-force oracle', () => {
  const docs = makeDocs(400, 7);
  const oracle = new Oracle(docs);
  let readers: SearchReader[] = [];

  beforeAll(async () => {
    readers = await buildReaders(docs, 3);
  });

  it('returns the same total and top-k for random queries and sorts', () => {
    fc.assert(fc.property(queryArb, sortArb, fc.integer({ min: 1, max: 40 }), (dsl, sortValue, k) => {
      const query = parseQuery(dsl);
      const sort = parseSort(sortValue);
      const result = search(readers, { query, sort, k }, SCHEMA);
      const want = expected(docs, oracle, query, sort);
      expect(result.total).toBe(want.total);
      check(result.hits, want.ranked, k);
      const count = search(readers, { query, sort, k, countOnly: true }, SCHEMA);
      expect(count).toEqual({ total: want.total, hits: [] });
    }), { numRuns: 400 });
  });
});

describe('search with deletions and updates across readers', () => {
  const original = makeDocs(300, 11);
  const updated = makeDocs(300, 12);
  let live: Doc[] = [];
  let readers: SearchReader[] = [];

  beforeAll(async () => {
    // Two segments, then a buffer holding updated copies (old copies deleted) and deletions.
    const segments: SegmentReader[] = [];
    for (let p = 0; p < 2; p++) {
      const buffer = new WriteBuffer();
      for (const d of original.slice(p * 150, (p + 1) * 150)) buffer.add(d.docid, indexDocument(d));
      buffer.freeze();
      segments.push(new SegmentReader(p + 1, await flushWriteBuffer(buffer)));
    }
    const buffer = new WriteBuffer();
    const rnd = random(5);
    const byDocid = new Map(original.map((d) => [d.docid, d]));
    for (const d of original) {
      const r = rnd();
      if (r < 0.15) {
        segments[d.docid <= 150 ? 0 : 1]!.delete(d.docid);
        byDocid.delete(d.docid);
      } else if (r < 0.35) {
        const copy = updated[d.docid - 1]!;
        segments[d.docid <= 150 ? 0 : 1]!.delete(d.docid);
        buffer.add(d.docid, indexDocument(copy));
        byDocid.set(d.docid, copy);
      }
    }
    live = [...byDocid.values()].sort((a, b) => a.docid - b.docid);
    readers = [...segments, buffer];
  });

  it('matches exactly the live documents (totals, sets, value order)', () => {
    fc.assert(fc.property(queryArb, fc.constantFrom<unknown>('n', '-when', ['tag', 'n']), (dsl, sortValue) => {
      const query = parseQuery(dsl);
      const oracle = new Oracle(live);
      const want = live.filter((d) => oracle.eval(query, d).match).map((d) => d.docid);
      const all = search(readers, { query, sort: [], k: live.length }, SCHEMA);
      expect(all.total).toBe(want.length);
      expect(all.hits.map((h) => h.docid).sort((a, b) => a - b)).toEqual(want);
      // Sort values are exact whatever the weights: compare them rank by rank.
      const sort = parseSort(sortValue);
      const sorted = search(readers, { query, sort, k: 25 }, SCHEMA);
      const ranked = expected(live, oracle, query, sort).ranked;
      expect(sorted.hits.map((h) => h.sortValues)).toEqual(ranked.slice(0, 25).map((e) => e.values));
    }), { numRuns: 200 });
  });
});
