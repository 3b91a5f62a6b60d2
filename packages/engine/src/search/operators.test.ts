/**
 * The operators of API.md §9.3 beyond plain terms, through search() over
 * segments and a write buffer: fuzzy words and keywords, `_synonym` (one
 * term's weight), `_elite_set` (the 10 subqueries of highest weight), `_max`,
 * casts, and sorting by distance to a number, a date or a string (§9.5).
 */
import { TesseraError } from '@tessera/errors';
import { Bm25Weight } from '../scorers/bm25.js';
import { parseQuery, parseSort } from '@tessera/search-model';
import { search, type SearchReader, type SearchResult } from './index.js';
import { buildReaders, EPOCH_2020, type Doc } from './search.fixture.js';
import { SCHEMA } from './search.fixture.js';
import { stringDistance } from './string-metrics.js';

function doc(docid: number, body: string, extra: Partial<Doc> = {}): Doc {
  return { docid, body, tags: [], ...extra };
}

function run(readers: SearchReader[], dsl: unknown, sort?: unknown, countOnly = false): SearchResult {
  return search(readers, { query: parseQuery(dsl), sort: parseSort(sort), k: 100, countOnly }, SCHEMA);
}

const ids = (r: SearchResult): number[] => r.hits.map((h) => h.docid).sort((a, b) => a - b);
const ordered = (r: SearchResult): number[] => r.hits.map((h) => h.docid);
const scoreOf = (r: SearchResult, docid: number): number => r.hits.find((h) => h.docid === docid)!.score;

function errorOf(f: () => unknown): TesseraError {
  try {
    f();
  } catch (err) {
    if (err instanceof TesseraError) return err;
    throw err;
  }
  throw new Error('no error');
}

describe('fuzzy words and keywords', () => {
  let readers: SearchReader[];
  beforeAll(async () => {
    readers = await buildReaders([
      doc(1, 'the uncertain future'), doc(2, 'unserten spelling'), doc(3, 'certain death'),
      doc(4, 'fox hunt', { tags: ['Green'] }), doc(5, 'ofx files', { tags: ['grene'] }), doc(6, 'box of foxes', { tags: ['red'] }),
    ], 3);
  });

  it('t~N matches the terms within N edits, a transposition counting one', () => {
    expect(ids(run(readers, { body: 'unserten~3' }))).toEqual([1, 2]);
    expect(ids(run(readers, { body: 'unserten~2' }))).toEqual([2]);
    expect(ids(run(readers, { body: 'unserten~0' }))).toEqual([2]);
    expect(ids(run(readers, { body: 'fox~1' }))).toEqual([4, 5, 6]);
    expect(ids(run(readers, { body: 'fox~' }))).toEqual([4, 5, 6]);
    expect(ids(run(readers, { body: 'FOX~1' }))).toEqual([4, 5, 6]);
  });

  it('{"_fuzzy": s} makes every plain word of the text fuzzy, and the whole keyword value', () => {
    expect(ids(run(readers, { body: { _fuzzy: 'unsertain deth' } }))).toEqual([1, 2, 3]);
    expect(ids(run(readers, { body: { _fuzzy: 'fx~1' } }))).toEqual([4, 5]);
    expect(ids(run(readers, { tag: { _fuzzy: 'gren' } }))).toEqual([4, 5, 6]);
    expect(ids(run(readers, { tag: 'gren~1' }))).toEqual([4, 5]);
    expect(ids(run(readers, { tag: 'GREEN~0' }))).toEqual([4]);
  });

  it('counting gives the same total as searching', () => {
    for (const q of [{ body: 'fox~2' }, { tag: 'red~2' }, { body: { _fuzzy: 'sertain' } }]) {
      expect(run(readers, q, undefined, true).total).toBe(run(readers, q).total);
    }
  });

  it('weighs the expansions as one term (Xapian combines OP_EDIT_DISTANCE with OP_SYNONYM)', () => {
    // fox~1 expands to fox, ofx and box (one document each): one term over their union.
    const n = 6;
    const bm25 = new Bm25Weight({ documents: n, termFrequency: n * (1 - (5 / 6) ** 3), averageLength: 14 / 6 });
    const r = run(readers, { body: 'fox~1' });
    expect(scoreOf(r, 4)).toBeCloseTo(bm25.score(1, 2), 12);
    expect(scoreOf(r, 5)).toBeCloseTo(bm25.score(1, 2), 12);
    expect(scoreOf(r, 6)).toBeCloseTo(bm25.score(1, 3), 12);
  });
});

describe('_synonym, _elite_set, _max', () => {
  // Body lengths 2, 1, 1, 1, 2; "colour" in 1 document, "color" in 3.
  const docs = [doc(1, 'colour color'), doc(2, 'color'), doc(3, 'color'), doc(4, 'hue'), doc(5, 'tint shade')];
  let readers: SearchReader[];
  beforeAll(async () => {
    readers = await buildReaders(docs, 2);
  });

  it('_synonym weighs as one term: summed frequency, the union\'s estimated document frequency', () => {
    const n = docs.length;
    const df = n * (1 - (1 - 1 / n) * (1 - 3 / n));
    const bm25 = new Bm25Weight({ documents: n, termFrequency: df, averageLength: 7 / 5 });
    for (const query of [{ body: { _synonym: 'colour color' } }, { _synonym: [{ body: 'colour' }, { body: 'color' }] }]) {
      const r = run(readers, query);
      expect(ids(r)).toEqual([1, 2, 3]);
      expect(scoreOf(r, 1)).toBeCloseTo(bm25.score(2, 2), 12);
      expect(scoreOf(r, 2)).toBeCloseTo(bm25.score(1, 1), 12);
    }
    // A plain OR adds two terms' weights instead.
    const or = run(readers, { body: 'colour color' });
    expect(scoreOf(or, 1)).not.toBeCloseTo(bm25.score(2, 2), 6);
  });

  it('_synonym of non-text subqueries matches with weight 0', () => {
    const r = run(readers, { _synonym: [{ n: { _in: '..100' } }, { body: 'nothing' }] });
    expect(r.total).toBe(0);
    const tags = run(readers, { _synonym: [{ body: 'hue' }, { _id: 5 }] });
    expect(ids(tags)).toEqual([4, 5]);
    expect(scoreOf(tags, 5)).toBe(0);
  });

  it('_max (string and array) weighs a document by its best subquery', () => {
    const colour = scoreOf(run(readers, { body: 'colour' }), 1);
    const color = scoreOf(run(readers, { body: 'color' }), 1);
    expect(scoreOf(run(readers, { body: { _max: 'colour color' } }), 1)).toBeCloseTo(Math.max(colour, color), 12);
    expect(scoreOf(run(readers, { _max: [{ body: 'colour' }, { body: 'color' }] }), 1)).toBeCloseTo(Math.max(colour, color), 12);
  });

  it('_elite_set keeps the 10 subqueries of highest estimated weight (the rarest words)', async () => {
    // w00 … w11: word i appears in i + 1 documents, so w10 and w11 are the two most common.
    const many: Doc[] = [];
    let docid = 1;
    for (let i = 0; i < 12; i++) for (let j = 0; j <= i; j++) many.push(doc(docid++, `w${String(i).padStart(2, '0')} filler`));
    const r12 = await buildReaders(many, 2);
    const words = Array.from({ length: 12 }, (_, i) => `w${String(i).padStart(2, '0')}`);
    const kept = many.filter((d) => !d.body.startsWith('w10') && !d.body.startsWith('w11')).map((d) => d.docid);
    expect(ids(run(r12, { body: { _elite_set: words.join(' ') } }))).toEqual(kept);
    expect(ids(run(r12, { _elite_set: words.map((w) => ({ body: w })) }))).toEqual(kept);
    // Counting chooses the same set.
    expect(run(r12, { body: { _elite_set: words.join(' ') } }, undefined, true).total).toBe(kept.length);
    // Ten or fewer: all of them.
    expect(ids(run(r12, { body: { _elite_set: words.slice(2).join(' ') } })).length).toBe(many.length - 3);
  });
});

describe('casts (§9.3)', () => {
  let readers: SearchReader[];
  beforeAll(async () => {
    readers = await buildReaders([
      doc(1, 'agent 15 true', { n: 1, tags: ['15'] }), doc(2, 'b', { n: 0, tags: ['true'] }),
      doc(3, 'c 2020-01-01T00:00:00', { n: 15, when: EPOCH_2020, tags: ['2020-01-01T00:00:00'] }),
    ], 2);
  });

  it('numbers, booleans and text interconvert', () => {
    expect(ids(run(readers, { n: { _boolean: true } }))).toEqual([1]);
    expect(ids(run(readers, { n: { _boolean: 'false' } }))).toEqual([2]);
    expect(ids(run(readers, { n: { _text: '15' } }))).toEqual([3]);
    expect(ids(run(readers, { n: { _float: '15.0' } }))).toEqual([3]);
    expect(ids(run(readers, { tag: { _integer: 15 } }))).toEqual([1]);
    expect(ids(run(readers, { tag: { _boolean: 't' } }))).toEqual([2]);
    expect(ids(run(readers, { body: { _integer: '15' } }))).toEqual([1]);
  });

  it('dates cast onto dates, or onto text in their canonical form', () => {
    expect(ids(run(readers, { when: { _date: '2020-01-01' } }))).toEqual([3]);
    expect(ids(run(readers, { when: { _datetime: { _year: 2020, _month: 1, _day: 1 } } }))).toEqual([3]);
    expect(ids(run(readers, { tag: { _date: '2020-01-01' } }))).toEqual([3]);
  });

  it('an unconvertible value matches nothing; a cast the type cannot take is 400', () => {
    expect(run(readers, { n: { _integer: 'abc' } }).total).toBe(0);
    expect(run(readers, { tag: { _uuid: 'not-a-uuid' } }).total).toBe(0);
    for (const q of [{ n: { _date: '2020-01-01' } }, { when: { _integer: 5 } }, { when: { _boolean: true } }, { n: { _uuid: '5' } }]) {
      const err = errorOf(() => run(readers, q));
      expect({ status: err.status, message: err.message }).toEqual({ status: 400, message: expect.stringMatching(/^Cast _\w+ does not apply/) });
    }
  });
});

describe('sorting by distance (§9.5)', () => {
  const docs = [
    doc(1, 'a', { n: 10, when: EPOCH_2020, tags: ['apple', 'zebra'] }),
    doc(2, 'b', { n: -4, when: EPOCH_2020 + 3 * 86400, tags: ['Apply'] }),
    doc(3, 'c', { n: 7, when: EPOCH_2020 - 86400, tags: ['maple'] }),
    doc(4, 'd', { tags: ['pineapple'] }),
    doc(5, 'e', { n: 3 }),
  ];
  let readers: SearchReader[];
  beforeAll(async () => {
    readers = await buildReaders(docs, 2);
  });

  it('numbers by absolute difference, missing values last either way', () => {
    const r = run(readers, {}, { n: { _value: 6 } });
    expect(ordered(r)).toEqual([3, 5, 1, 2, 4]);
    expect(r.hits.map((h) => h.sortValues![0])).toEqual([1, 3, 4, 10, null]);
    expect(ordered(run(readers, {}, { n: { _value: 6, _order: 'desc' } }))).toEqual([2, 1, 5, 3, 4]);
    expect(ordered(run(readers, {}, { n: { _value: '6' } }))).toEqual([3, 5, 1, 2, 4]);
  });

  it('dates by absolute difference in seconds, the reference with date math', () => {
    const r = run(readers, {}, { when: { _value: '2020-01-01||+2d' } });
    expect(ordered(r)).toEqual([2, 1, 3, 4, 5]);
    expect(r.hits.map((h) => h.sortValues![0])).toEqual([86400, 2 * 86400, 3 * 86400, null, null]);
  });

  it('strings by the metric (Jaro by default), ascending by the nearest value, descending by the farthest', () => {
    for (const metric of ['levenshtein', 'leven', 'jaro', 'jarowinkler', 'dice', 'jaccard', 'lcs', 'lcsq', 'soundex', undefined]) {
      const spec = metric === undefined ? { _value: 'Apple' } : { _value: 'Apple', _metric: metric };
      const r = run(readers, {}, { tag: spec });
      const canonical = parseSort({ tag: spec })[0]!.metric ?? 'jaro';
      const nearest = (d: Doc): number => Math.min(...d.tags.map((t) => stringDistance(canonical as 'jaro', t, 'Apple')));
      const expected = docs.filter((d) => d.tags.length > 0).map((d) => ({ id: d.docid, v: nearest(d) }))
        .sort((a, b) => a.v - b.v || a.id - b.id);
      expect({ metric, order: ordered(r) }).toEqual({ metric, order: [...expected.map((e) => e.id), 5] });
      expect(r.hits[0]!.sortValues![0]).toBeCloseTo(expected[0]!.v, 12);
    }
    const desc = run(readers, {}, { tag: { _value: 'apple', _metric: 'levenshtein', _order: 'desc' } });
    // Document 1's farthest value is "zebra" (5 substitutions of 5), farther than any other document's.
    expect(ordered(desc)[0]).toBe(1);
    expect(desc.hits[0]!.sortValues![0]).toBe(1);
    expect(desc.hits[1]!.sortValues![0]).toBeCloseTo(4 / 9, 12); // pineapple
  });

  it('a reference that does not convert, an unknown metric or a type without distance is 400', () => {
    for (const sort of [{ n: { _value: 'abc' } }, { when: { _value: 'not a date' } }, { tag: { _value: { a: 1 } } }]) {
      expect(errorOf(() => run(readers, {}, sort)).status).toBe(400);
    }
    expect(errorOf(() => parseSort({ tag: { _value: 'x', _metric: 'hamming' } })).message).toMatch(/Unknown metric: hamming/);
  });
});
