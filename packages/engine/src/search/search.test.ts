import { cursorSortKeys, parseQuery, parseQueryString, parseSort, type SearchAfter } from '@tessera/search-model';
import { flushWriteBuffer } from '../segments/flush.js';
import { SegmentReader } from '../segments/segment-reader.js';
import { WriteBuffer } from '../segments/write-buffer.js';
import { search, type SearchReader, type SearchResult } from './index.js';
import { buildReaders, EPOCH_2020, indexDocument, random, SCHEMA, type Doc } from './search.fixture.js';

function doc(docid: number, body: string, extra: Partial<Doc> = {}): Doc {
  return { docid, body, tags: [], ...extra };
}

function run(readers: SearchReader[], dsl: unknown, options: { sort?: unknown; k?: number } = {}): SearchResult {
  return search(readers, { query: parseQuery(dsl), sort: parseSort(options.sort), k: options.k ?? 100 }, SCHEMA);
}

const ids = (r: SearchResult): number[] => r.hits.map((h) => h.docid);

/** Every page of `k` hits after the previous page's last, as `_search_after` asks them. */
function pageWithCursor(readers: SearchReader[], dsl: unknown, sort: unknown, k: number): { docids: number[]; befores: number[] } {
  const keys = cursorSortKeys(parseSort(sort));
  const docids: number[] = [];
  const befores: number[] = [];
  let after: SearchAfter | undefined;
  for (;;) {
    const r = search(readers, { query: parseQuery(dsl), sort: keys, k, ...(after === undefined ? {} : { after }) }, SCHEMA);
    if (r.hits.length === 0) return { docids, befores };
    // A cursor that did not move the page on would loop forever.
    if (docids.length > 10_000) throw new Error('pages do not end');
    befores.push(r.before ?? 0);
    docids.push(...r.hits.map((h) => h.docid));
    after = { values: r.hits[r.hits.length - 1]!.sortValues!, inclusive: false };
  }
}

describe('search', () => {
  it('pages after a cursor: each match once, in the order of one page, counting those before it', async () => {
    const docs = Array.from({ length: 230 }, (_, i) => doc(i + 1, i % 4 === 0 ? 'alpha alpha beta' : i % 3 === 0 ? 'alpha' : 'beta gamma', { n: i % 9 }));
    const readers = await buildReaders(docs, 3);
    const cases: Array<[unknown, unknown]> = [
      [{ _match_all: {} }, '-n'],
      // A range sorted by its own field: read from the value-sorted index.
      [{ n: { _in: { _range: { _from: 2, _to: 7 } } } }, 'n'],
      [{ body: 'alpha beta' }, '_score'],
      [{ body: 'alpha' }, ['-n', '_score']],
    ];
    for (const [dsl, sort] of cases) {
      const all = search(readers, { query: parseQuery(dsl), sort: cursorSortKeys(parseSort(sort)), k: 1000 }, SCHEMA);
      const paged = pageWithCursor(readers, dsl, sort, 17);
      expect(paged.docids).toEqual(all.hits.map((h) => h.docid));
      expect(paged.befores).toEqual(paged.befores.map((_, i) => i * 17));
    }
    // The total counts every match, before the cursor or not.
    const first = search(readers, { query: parseQuery({ _match_all: {} }), sort: cursorSortKeys(parseSort('n')), k: 5 }, SCHEMA);
    const next = search(readers, { query: parseQuery({ _match_all: {} }), sort: cursorSortKeys(parseSort('n')), k: 5, after: { values: first.hits[4]!.sortValues!, inclusive: false } }, SCHEMA);
    expect(next.total).toBe(230);
    expect(next.hits[0]!.sortValues).toEqual([0, 0, 46]);
    // Inclusive (a later index of a multi-index search): the cursor's own values are after it.
    const inclusive = search(readers, { query: parseQuery({ _match_all: {} }), sort: cursorSortKeys(parseSort('n')), k: 1, after: { values: first.hits[4]!.sortValues!, inclusive: true } }, SCHEMA);
    expect(inclusive.hits[0]!.docid).toBe(first.hits[4]!.docid);
  });

  it('ranks a rarer term higher (BM25) and adds weights in OR', async () => {
    const docs = [doc(1, 'common rare'), ...Array.from({ length: 9 }, (_, i) => doc(i + 2, 'common filler'))];
    const readers = await buildReaders(docs, 2);
    const r = run(readers, { body: 'common rare' });
    expect(r.total).toBe(10);
    expect(r.hits[0]!.docid).toBe(1);
    const rare = run(readers, { body: 'rare' }).hits[0]!.score;
    const common = run(readers, { body: 'common' }).hits.find((h) => h.docid === 1)!.score;
    expect(rare).toBeGreaterThan(common);
    expect(r.hits[0]!.score).toBeCloseTo(rare + common, 12);
    // Ties on weight: docid ascending.
    expect(ids(r).slice(1)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('matches phrases by position, _phrase in order and _near in any order within 10', async () => {
    const readers = await buildReaders([
      doc(1, 'x alpha beta y'), doc(2, 'beta alpha'), doc(3, 'alpha x beta'),
      doc(4, 'alpha a b c d e f g h i j k beta'), doc(5, 'beta q alpha'),
    ], 2);
    expect(ids(run(readers, { body: '"alpha beta"' }))).toEqual([1]);
    expect(ids(run(readers, { body: { _phrase: 'alpha beta' } })).sort()).toEqual([1, 3]);
    expect(ids(run(readers, { body: { _near: 'alpha beta' } })).sort()).toEqual([1, 2, 3, 5]);
    expect(run(readers, { body: 'alpha beta' }).total).toBe(5);
    // A word of several tokens is a phrase of them.
    expect(ids(run(readers, { body: 'alpha-beta' }))).toEqual([1]);
  });

  it('expands prefixes to the 50 most frequent terms and wildcards over the dictionary', async () => {
    const docs: Doc[] = [];
    let docid = 1;
    // pre00 … pre59: term i appears in (i + 1) documents.
    for (let i = 0; i < 60; i++) for (let j = 0; j <= i; j++) docs.push(doc(docid++, `pre${String(i).padStart(2, '0')} gamma`));
    const readers = await buildReaders(docs, 3);
    const expectedTotal = docs.filter((d) => Number(d.body.slice(3, 5)) >= 10).length;
    expect(run(readers, { body: 'pre**' }).total).toBe(expectedTotal);
    expect(run(readers, { body: { _partial: 'pre' } }).total).toBe(expectedTotal);
    expect(run(readers, { body: 'pre0*' }).total).toBe(55);
    expect(run(readers, { body: 'pre?9' }).total).toBe(10 + 20 + 30 + 40 + 50 + 60);
    expect(run(readers, { body: 'g?mm*' }).total).toBe(docs.length);
    expect(run(readers, { body: 'nothing*' }).total).toBe(0);
  });

  it('stems text with a language and drops stop words', async () => {
    const readers = await buildReaders([
      doc(1, 'a', { title: 'The running dogs' }), doc(2, 'b', { title: 'a dog runs' }), doc(3, 'c', { title: 'cats sleep' }),
    ], 2);
    expect(ids(run(readers, { title: 'run' })).sort()).toEqual([1, 2]);
    expect(ids(run(readers, { title: 'dogs' })).sort()).toEqual([1, 2]);
    expect(ids(run(readers, { title: '"running dogs"' }))).toEqual([1]);
    expect(run(readers, { title: 'the' }).total).toBe(0);
    expect(ids(run(readers, { title: 'the cats' }))).toEqual([3]);
  });

  it('matches keywords case-insensitively, by pattern, and sorts by their values', async () => {
    const readers = await buildReaders([
      doc(1, 'a', { tags: ['Red'] }), doc(2, 'a', { tags: ['blue', 'green'] }), doc(3, 'a', { tags: ['Blueish'] }), doc(4, 'a'),
    ], 2);
    expect(ids(run(readers, { tag: 'RED' }))).toEqual([1]);
    expect(ids(run(readers, { tag: 'bl*' }))).toEqual([2, 3]);
    expect(ids(run(readers, { tag: 'blue**' }))).toEqual([2, 3]);
    expect(ids(run(readers, { tag: '*' }))).toEqual([1, 2, 3]);
    // Ascending by the smallest value, descending by the largest; no value last.
    const asc = run(readers, { _match_all: {} }, { sort: 'tag' });
    expect(ids(asc)).toEqual([3, 1, 2, 4]);
    expect(asc.hits.map((h) => h.sortValues)).toEqual([['Blueish'], ['Red'], ['blue'], [null]]);
    expect(ids(run(readers, { _match_all: {} }, { sort: '-tag' }))).toEqual([2, 1, 3, 4]);
    expect(run(readers, { unknown: 'x' }).total).toBe(0);
    expect(ids(run(readers, { _match_all: {} }, { sort: 'unknown' }))).toEqual([1, 2, 3, 4]);
  });

  it('filters ranges on values exactly and on accuracy terms by bucket (§8.3)', async () => {
    const readers = await buildReaders([
      doc(1, 'a', { n: 20, approx: 20, when: EPOCH_2020 }), doc(2, 'a', { n: 100, approx: 100, when: EPOCH_2020 + 86400 * 40 }),
      doc(3, 'a', { n: 180, approx: 180 }), doc(4, 'a', { n: 250, approx: 250 }), doc(5, 'a'),
    ], 2);
    expect(ids(run(readers, { n: { _in: '50..150' } }))).toEqual([2]);
    // field_terms only: 50..150 uses step 100, buckets [0, 100) and [100, 200).
    expect(ids(run(readers, { approx: { _in: '50..150' } }))).toEqual([1, 2, 3]);
    expect(ids(run(readers, { approx: { _in: '..99' } }))).toEqual([1, 2, 3, 4]);
    expect(ids(run(readers, { approx: 180 }))).toEqual([3]);
    expect(ids(run(readers, { approx: '*' }))).toEqual([1, 2, 3, 4]);
    expect(ids(run(readers, { n: { _in: { _range: { _from: 100 } } } }))).toEqual([2, 3, 4]);
    expect(run(readers, { n: { _in: '200..100' } }).total).toBe(0);
    expect(ids(run(readers, { when: { _in: '2020-01-15..2020-03-01' } }))).toEqual([2]);
    expect(ids(run(readers, { when: '2020-01-01' }))).toEqual([1]);
    expect(ids(run(readers, { n: { _integer: '180' } }))).toEqual([3]);
    expect(ids(run(readers, { _match_all: {} }, { sort: '-n' }))).toEqual([4, 3, 2, 1, 5]);
    expect(ids(run(readers, { _match_all: {} }, { sort: { n: { _value: 120 } } }))).toEqual([2, 3, 1, 4, 5]);
  });

  it('finds documents by _id and sorts by it', async () => {
    const readers = await buildReaders([doc(1, 'a'), doc(2, 'a'), doc(3, 'b')], 2);
    expect(ids(run(readers, { _id: 2 }))).toEqual([2]);
    expect(ids(run(readers, { _id: '3' }))).toEqual([3]);
    expect(ids(run(readers, { _id: [1, 3] }))).toEqual([1, 3]);
    expect(ids(run(readers, { _match_all: {} }, { sort: '-_id' }))).toEqual([3, 2, 1]);
  });

  it('sees only live documents across segments and the write buffer', async () => {
    const first = new WriteBuffer();
    for (let d = 1; d <= 6; d++) first.add(d, indexDocument(doc(d, d % 2 === 0 ? 'even word' : 'odd word', { n: d })));
    first.freeze();
    const segment = new SegmentReader(1, await flushWriteBuffer(first));
    const buffer = new WriteBuffer();
    // Doc 2 updated (its new copy is odd), doc 3 deleted; doc 7 added out of docid order after doc 2.
    buffer.add(7, indexDocument(doc(7, 'even word', { n: 7 })));
    buffer.add(2, indexDocument(doc(2, 'odd word', { n: 2 })));
    segment.delete(2);
    segment.delete(3);
    const readers: SearchReader[] = [segment, buffer];
    expect(ids(run(readers, { body: 'even' }))).toEqual([4, 6, 7]);
    expect(ids(run(readers, { body: 'odd' })).sort()).toEqual([1, 2, 5]);
    expect(run(readers, { _match_all: {} }).total).toBe(6);
    expect(ids(run(readers, { n: { _in: '2..3' } }))).toEqual([2]);
    expect(ids(run(readers, { _not: [{ body: 'odd' }] }))).toEqual([4, 6, 7]);
    expect(ids(run(readers, { _match_all: {} }, { sort: '-n' }))).toEqual([7, 6, 5, 4, 2, 1]);
    expect(search(readers, { query: parseQuery({ body: 'word' }), sort: [], k: 0 }, SCHEMA)).toEqual({ total: 6, hits: [] });
  });

  it('runs query strings: boolean operators, fields, ranges, global text', async () => {
    const readers = await buildReaders([doc(1, 'alpha beta', { n: 5 }), doc(2, 'beta gamma', { n: 50 }), doc(3, 'gamma', { n: 500 })], 2);
    const q = (s: string): number[] => ids(search(readers, { query: parseQueryString(s), sort: parseSort('n'), k: 10 }, SCHEMA));
    expect(q('body:beta AND n:[10..1000]')).toEqual([2]);
    expect(q('body:gamma AND NOT body:beta')).toEqual([3]);
    // No operator is OR (§9.4): gamma, or not beta.
    expect(q('body:gamma NOT body:beta')).toEqual([2, 3]);
    // A leaf without a field searches global terms (none are indexed here) and every text and keyword field (API.md §9.4).
    expect(q('gamma')).toEqual(q('body:gamma'));
    expect(q('gamma')).toEqual([2, 3]);
    expect(q('body:alpha OR body:gamma')).toEqual([1, 2, 3]);
    expect(q('*')).toEqual([1, 2, 3]);
  });

  it('block-max pruning of a one-term query keeps the exact top k and total (deletions included)', async () => {
    const rand = random(7);
    const docs: Doc[] = [];
    for (let d = 1; d <= 3000; d++) {
      const words: string[] = [];
      // Mostly once, rarely many times: most blocks cannot reach the best weights and are skipped.
      const repeats = rand() < 0.6 ? (rand() < 0.01 ? 6 + Math.floor(rand() * 4) : 1) : 0;
      for (let i = 0; i < repeats; i++) words.push('alpha');
      const filler = Math.floor(rand() * 30);
      for (let i = 0; i < filler; i++) words.push('beta');
      docs.push(doc(d, words.join(' ') || 'gamma'));
    }
    const readers = await buildReaders(docs, 3);
    // Deleted documents in a segment: skipped blocks must count only live ones.
    for (let d = 5; d <= 1000; d += 7) (readers[0] as SegmentReader).delete(d);
    const all = run(readers, { body: 'alpha' }, { k: 100_000 });
    expect(all.total).toBe(all.hits.length);
    for (const k of [1, 10, 57]) {
      const top = run(readers, { body: 'alpha' }, { k });
      expect(top.total).toBe(all.total);
      expect(top.hits).toEqual(all.hits.slice(0, k));
    }
  });

  it('a range sorted by its own field reads the sorted index and answers as the general path', async () => {
    const rand = random(11);
    const docs: Doc[] = [];
    // Segments of 5,000 (the sorted index is built from 4,096 docs up); many equal values, some missing.
    for (let d = 1; d <= 15_000; d++) docs.push(doc(d, 'alpha', rand() < 0.05 ? {} : { n: Math.floor(rand() * 800) }));
    const readers = await buildReaders(docs, 3);
    for (let d = 3; d <= 5000; d += 11) (readers[0] as SegmentReader).delete(d);
    for (const [from, to] of [[100, 140], [0, 799], [500, 500], [-5, 3], [790, 2000], [900, 1000]] as const) {
      const range = { n: { _in: { _range: { _from: from, _to: to } } } };
      for (const sort of ['-n', 'n', ['-n', '-_id'], ['n', '_id']]) {
        for (const k of [1, 10, 37]) {
          const fast = run(readers, range, { sort, k });
          // The same range twice under _and takes the general path (bitsets and the heap).
          const general = run(readers, { _and: [range, range] }, { sort, k });
          expect(fast.total).toBe(general.total);
          expect(fast.hits).toEqual(general.hits);
        }
      }
    }
  });
});
