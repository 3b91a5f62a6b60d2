import fc from 'fast-check';
import { countMatches, TopKCollector } from '../collect/top-k.js';
import { cheapestFirst } from './boolean.js';
import { AndMaybeScorer, ArrayScorer, BM25_DEFAULTS, Bm25Weight, ConjunctionScorer, DisjunctionScorer, ExclusionScorer, NO_MORE_DOCS, type Scorer } from './index.js';

const sortedSet = fc.uniqueArray(fc.integer({ min: 1, max: 400 }), { maxLength: 80 }).map((a) => a.sort((x, y) => x - y));

function drain(s: Scorer): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let d = s.next(); d !== NO_MORE_DOCS; d = s.next()) out.push([d, s.score()]);
  return out;
}

/** Each input set i weighs (i + 1) per document, so combined weights are checkable. */
function scorers(sets: number[][]): Scorer[] {
  return sets.map((set, i) => new ArrayScorer(set, i + 1));
}

describe('boolean scorers against set oracles (fast-check)', () => {
  it('conjunction = intersection, weight = sum', () => {
    fc.assert(fc.property(fc.array(sortedSet, { minLength: 1, maxLength: 5 }), (sets) => {
      const want = sets[0]!.filter((d) => sets.every((s) => s.includes(d)))
        .map((d) => [d, sets.reduce((sum, _, i) => sum + i + 1, 0)]);
      expect(drain(new ConjunctionScorer(scorers(sets)))).toEqual(want);
    }));
  });

  it('disjunction = union; sum, max and xor weights', () => {
    fc.assert(fc.property(fc.array(sortedSet, { minLength: 1, maxLength: 5 }), (sets) => {
      const all = [...new Set(sets.flat())].sort((a, b) => a - b);
      const weights = (d: number) => sets.flatMap((s, i) => (s.includes(d) ? [i + 1] : []));
      expect(drain(new DisjunctionScorer(scorers(sets), 'sum'))).toEqual(all.map((d) => [d, weights(d).reduce((a, b) => a + b, 0)]));
      expect(drain(new DisjunctionScorer(scorers(sets), 'max'))).toEqual(all.map((d) => [d, Math.max(...weights(d))]));
      expect(drain(new DisjunctionScorer(scorers(sets), 'xor')).map(([d]) => d)).toEqual(all.filter((d) => weights(d).length % 2 === 1));
    }));
  });

  it('advance(target) equals next() filtered to ≥ target, for every combination', () => {
    fc.assert(fc.property(fc.array(sortedSet, { minLength: 2, maxLength: 4 }), fc.array(fc.integer({ min: 1, max: 420 }), { maxLength: 10 }), (sets, targets) => {
      const make = [
        () => new ConjunctionScorer(scorers(sets)),
        () => new DisjunctionScorer(scorers(sets)),
        () => new ExclusionScorer(new ArrayScorer(sets[0]!, 1), new DisjunctionScorer(scorers(sets.slice(1)))),
      ];
      for (const build of make) {
        const full = drain(build()).map(([d]) => d);
        const s = build();
        let at = 0;
        for (const t of [...targets].sort((a, b) => a - b)) {
          const want = full.find((d) => d >= Math.max(t, at)) ?? NO_MORE_DOCS;
          const got = t <= at ? s.docid : s.advance(t);
          if (t > at) expect(got).toBe(want);
          at = Math.max(at, got === NO_MORE_DOCS ? at : got);
          if (got === NO_MORE_DOCS) break;
        }
      }
    }));
  });

  it('exclusion and and-maybe', () => {
    fc.assert(fc.property(sortedSet, sortedSet, (a, b) => {
      expect(drain(new ExclusionScorer(new ArrayScorer(a, 1), new ArrayScorer(b, 5))).map(([d]) => d)).toEqual(a.filter((d) => !b.includes(d)));
      expect(drain(new AndMaybeScorer(new ArrayScorer(a, 1), new ArrayScorer(b, 5)))).toEqual(a.map((d) => [d, b.includes(d) ? 6 : 1]));
    }));
  });
});

describe('TopKCollector', () => {
  it('keeps the k best (weight desc, docid asc) and counts every match', () => {
    fc.assert(fc.property(fc.array(fc.tuple(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 0, max: 20 })), { maxLength: 200 }), fc.integer({ min: 0, max: 15 }), (entries, k) => {
      const unique = [...new Map(entries.map(([d, s]) => [d, s])).entries()];
      const c = new TopKCollector(k);
      for (const [d, s] of unique) c.collect(d, s);
      const want = [...unique].sort((x, y) => y[1] - x[1] || x[0] - y[0]).slice(0, k).map(([docid, score]) => ({ docid, score }));
      expect(c.hits()).toEqual(want);
      expect(c.total).toBe(unique.length);
    }));
  });

  it('counts without weighing', () => {
    expect(countMatches(new ArrayScorer([1, 5, 9]))).toBe(3);
  });
});

describe('Bm25Weight (Xapian defaults)', () => {
  it('grows with wdf, shrinks with length and document frequency, never negative', () => {
    const rare = new Bm25Weight({ documents: 1000, termFrequency: 3, averageLength: 20 });
    const common = new Bm25Weight({ documents: 1000, termFrequency: 900, averageLength: 20 });
    expect(rare.score(2, 20)).toBeGreaterThan(rare.score(1, 20));
    expect(rare.score(1, 10)).toBeGreaterThan(rare.score(1, 40));
    expect(rare.score(1, 20)).toBeGreaterThan(common.score(1, 20));
    expect(common.score(1, 20)).toBeGreaterThan(0);
    expect(rare.maxScore()).toBeGreaterThanOrEqual(rare.score(1000, 1));
  });

  it('matches the formula: idf·(k1+1)·wdf / (k1·(L·b + 1 − b) + wdf)', () => {
    const w = new Bm25Weight({ documents: 100, termFrequency: 10, averageLength: 10 });
    const { k1, b } = BM25_DEFAULTS;
    const idf = Math.log((100 - 10 + 0.5) / (10 + 0.5));
    expect(w.score(3, 20)).toBeCloseTo((idf * (k1 + 1) * 3) / (k1 * (2 * b + 1 - b) + 3), 12);
    // Short fields are floored at the minimum normalised length (0.5).
    expect(w.score(1, 1)).toBeCloseTo(w.score(1, 5), 12);
  });

  it('stays non-negative when the document frequency counts more documents than are live (replaced or deleted since)', () => {
    // A term in every one of 10 live documents whose postings still count 12 (two replaced).
    const stale = new Bm25Weight({ documents: 10, termFrequency: 12, averageLength: 5 });
    const everywhere = new Bm25Weight({ documents: 10, termFrequency: 10, averageLength: 5 });
    expect(stale.termWeight).toBeGreaterThan(0);
    expect(stale.score(1, 5)).toBeGreaterThan(0);
    expect(stale.termWeight).toBe(everywhere.termWeight);
    fc.assert(fc.property(fc.nat(10_000), fc.nat(20_000), fc.integer({ min: 1, max: 50 }), (documents, termFrequency, wdf) => {
      const w = new Bm25Weight({ documents, termFrequency, averageLength: 7 });
      return w.termWeight >= 0 && w.score(wdf, 7) >= 0;
    }));
  });
});

test('cheapestFirst orders by cost, equal costs keeping their order', () => {
  fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 12 }), (costs) => {
    const items = costs.map((c, i) => ({ i, cost: () => c }));
    const want = [...items].sort((a, b) => a.cost() - b.cost()).map((x) => x.i);
    expect(cheapestFirst([...items]).map((x) => x.i)).toEqual(want);
  }));
});
