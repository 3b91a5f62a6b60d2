import fc from 'fast-check';
import { encodeBody, encodeDocumentRecord } from '../store/records.js';
import { DECODED_ENTRIES_MAX, DocumentCache, DocumentCacheBudget, entryBytes as entryBytesOfKey } from './document-cache.js';

/** Bytes an entry counts, for the one-byte-longer keys of these tests ('s' + ID). */
function entryBytes(recordBytes: number, id = 'a'): number {
  return entryBytesOfKey(Buffer.byteLength(id) + 1, recordBytes);
}

/** A document record as LevelDB stores it; `pad` characters of body make it larger. */
function record(id: string, docid: number, version = 1, pad = 0): Buffer {
  return encodeDocumentRecord({ id, docid, version, seq: docid }, encodeBody({ id, pad: 'x'.repeat(pad) }));
}

/** A record whose entry counts exactly `bytes` against the budget. */
function recordOfEntryBytes(id: string, docid: number, bytes: number): Buffer {
  let pad = 0;
  for (let made = record(id, docid, 1, pad); ; made = record(id, docid, 1, pad)) {
    const missing = bytes - entryBytes(made.length, id);
    if (missing === 0) return made;
    pad += missing;
  }
}

/** Bytes an entry of these records counts (all of the same size: ids of one character, no padding). */
const ENTRY = entryBytes(record('a', 1).length);

describe('DocumentCache', () => {
  it('evicts the least recently used entries beyond its byte budget', () => {
    const cache = new DocumentCache(3 * ENTRY);
    cache.set('sa', 1, record('a', 1));
    cache.set('sb', 2, record('b', 2));
    cache.set('sc', 3, record('c', 3));
    expect(cache.get('sa')?.id).toBe('a'); // a is now the most recent
    cache.set('sd', 4, record('d', 4)); // evicts b, the least recently used
    expect(cache.get('sb')).toBeUndefined();
    expect(cache.get('sa')?.id).toBe('a');
    expect(cache.get('sc')?.id).toBe('c');
    expect(cache.get('sd')?.id).toBe('d');
    expect(cache.bytes).toBe(3 * ENTRY);
    expect(cache.size).toBe(3);
  });

  it('returns the document the record holds, and replaces an entry in place with the byte count exact', () => {
    const cache = new DocumentCache(10_000);
    cache.set('sa', 1, record('a', 1, 1));
    expect(cache.get('sa')).toEqual({ id: 'a', docid: 1, version: 1, seq: 1, body: { id: 'a', pad: '' } });
    const larger = record('a', 1, 2, 100);
    cache.set('sa', 1, larger);
    expect(cache.get('sa')?.version).toBe(2); // not the first version, decoded before
    expect(cache.bytes).toBe(entryBytes(larger.length));
    cache.delete('sa');
    expect(cache.bytes).toBe(0);
    expect(cache.size).toBe(0);
    expect(cache.budget.bytes).toBe(0);
  });

  it('copies the record: the caller may reuse its bytes', () => {
    const cache = new DocumentCache(10_000);
    const bytes = record('a', 1);
    cache.set('sa', 1, bytes);
    bytes.fill(0);
    expect(cache.get('sa')?.id).toBe('a');
  });

  it('does not cache a document larger than the whole budget, and drops its older entry', () => {
    const cache = new DocumentCache(ENTRY + 50);
    cache.set('sa', 1, record('a', 1, 1));
    cache.set('sa', 1, record('a', 1, 2, 100));
    expect(cache.get('sa')).toBeUndefined();
    expect(cache.bytes).toBe(0);
    expect(cache.budget.bytes).toBe(0);
  });

  it('does not cache a document over 1/64 of a large budget: one huge document would push out dozens', () => {
    const budget = 64 * 1024 * 1024;
    const cache = new DocumentCache(budget);
    const share = budget / 64;
    cache.set('sordinary', 1, record('ordinary', 1, 1, 4096));
    cache.set('shuge', 2, recordOfEntryBytes('huge', 2, share + 1));
    cache.set('sshare', 3, recordOfEntryBytes('share', 3, share));
    expect(cache.get('sordinary')?.id).toBe('ordinary');
    expect(cache.get('shuge')).toBeUndefined();
    expect(cache.get('sshare')?.id).toBe('share');
    // A small budget still takes entries up to 64 KiB (or itself).
    const small = new DocumentCache(200 * 1024);
    small.set('sa', 1, recordOfEntryBytes('a', 1, 64 * 1024));
    small.set('sb', 2, recordOfEntryBytes('b', 2, 64 * 1024 + 1));
    expect(small.get('sa')?.id).toBe('a');
    expect(small.get('sb')).toBeUndefined();
  });

  it('finds documents by docid and forgets the docid of a re-created document', () => {
    const cache = new DocumentCache(10_000);
    cache.set('sa', 1, record('a', 1));
    expect(cache.getByDocid(1)?.id).toBe('a');
    cache.set('sa', 7, record('a', 7)); // deleted and re-created elsewhere: a new docid
    expect(cache.getByDocid(1)).toBeUndefined();
    expect(cache.getByDocid(7)?.id).toBe('a');
    cache.delete('sa');
    expect(cache.getByDocid(7)).toBeUndefined();
  });

  it('an entry of another ID with the same #docid is stale: it goes', () => {
    const cache = new DocumentCache(10_000);
    cache.set('sa', 1, record('a', 1));
    cache.set('sb', 1, record('b', 1));
    expect(cache.get('sa')).toBeUndefined();
    expect(cache.getByDocid(1)?.id).toBe('b');
    expect(cache.size).toBe(1);
    // Other caches (shard copies) number their documents on their own.
    const other = new DocumentCache(cache.budget);
    other.set('sa', 1, record('a', 1));
    expect(cache.getByDocid(1)?.id).toBe('b');
    expect(other.getByDocid(1)?.id).toBe('a');
  });

  it('find counts a hit and makes the entry the most recent, but leaves a miss uncounted', () => {
    const cache = new DocumentCache(2 * ENTRY);
    cache.set('sa', 1, record('a', 1));
    cache.set('sb', 2, record('b', 2));
    expect(cache.find('sa')?.id).toBe('a');
    expect(cache.find('sz')).toBeUndefined();
    expect(cache.hits).toBe(1);
    expect(cache.misses).toBe(0);
    cache.set('sc', 3, record('c', 3)); // evicts b: a was found after it
    expect(cache.find('sb')).toBeUndefined();
    expect(cache.find('sa')?.id).toBe('a');
  });

  it('counts hits and misses; a zero budget caches nothing', () => {
    const cache = new DocumentCache(0);
    cache.set('sa', 1, record('a', 1));
    expect(cache.get('sa')).toBeUndefined();
    expect(cache.misses).toBe(1);
    expect(cache.hits).toBe(0);
  });

  it('caches sharing a budget are bounded together, least recently used of any cache first out', () => {
    const budget = new DocumentCacheBudget(3 * ENTRY);
    const one = new DocumentCache(budget);
    const two = new DocumentCache(budget);
    one.set('sa', 1, record('a', 1));
    two.set('sb', 2, record('b', 2));
    one.set('sc', 3, record('c', 3));
    expect(budget.bytes).toBe(3 * ENTRY);
    expect(one.get('sa')?.id).toBe('a'); // a is now more recent than b
    two.set('sd', 4, record('d', 4)); // over the budget together: b (the other cache's, least recent) goes
    expect(two.get('sb')).toBeUndefined();
    expect(one.get('sa')?.id).toBe('a');
    expect(one.bytes + two.bytes).toBe(3 * ENTRY);
    expect(budget.bytes).toBe(3 * ENTRY);
    // Each alone under its own bound would have kept everything; together they never pass the one budget.
    for (let i = 0; i < 20; i++) (i % 2 === 0 ? one : two).set(`s${String.fromCharCode(65 + i)}`, 10 + i, record(String.fromCharCode(65 + i), 10 + i));
    expect(budget.bytes).toBeLessThanOrEqual(3 * ENTRY);
    expect(one.size + two.size).toBe(3);
  });

  it('clearing one cache of a shared budget keeps the others', () => {
    const large = record('d', 4, 1, 6 * ENTRY);
    const budget = new DocumentCacheBudget(entryBytes(large.length) + ENTRY / 2);
    const one = new DocumentCache(budget);
    const two = new DocumentCache(budget);
    one.set('sa', 1, record('a', 1));
    two.set('sb', 2, record('b', 2));
    one.set('sc', 3, record('c', 3));
    one.clear();
    expect(one.size).toBe(0);
    expect(budget.bytes).toBe(ENTRY);
    expect(two.get('sb')?.id).toBe('b');
    two.set('sd', 4, large); // evicts b; the cleared entries are no longer in the order
    expect(two.get('sb')).toBeUndefined();
    expect(budget.bytes).toBe(entryBytes(large.length));
  });

  it('holds many small records in shared chunks, every byte of them within the budget', () => {
    const bytesMax = 1024 * 1024;
    const cache = new DocumentCache(bytesMax);
    const hot = 'hot';
    cache.set(hot, 1, record(hot, 1, 1, 100));
    let highest = 0;
    for (let i = 2; i <= 50_000; i++) {
      cache.set(`k${i}`, i, record(`k${i}`, i, 1, i % 300));
      // One document read all along stays (moved out of the chunks eviction empties).
      if (i % 1000 === 0) expect(cache.get(hot)?.body).toEqual({ id: hot, pad: 'x'.repeat(100) });
      highest = Math.max(highest, cache.budget.bytes);
    }
    expect(highest).toBeLessThanOrEqual(bytesMax);
    // Most of the budget holds documents: chunks waste little.
    expect(cache.bytes).toBeGreaterThan(bytesMax * 0.7);
    expect(cache.get('k50000')?.body).toEqual({ id: 'k50000', pad: 'x'.repeat(50_000 % 300) });
    expect(cache.get('k2')).toBeUndefined();
    for (let i = 2; i <= 50_000; i++) cache.delete(`k${i}`);
    cache.delete(hot);
    expect(cache.budget.bytes).toBe(0);
  });

  it('a hot document is decoded once; only the last DECODED_ENTRIES_MAX hit stay decoded', () => {
    const cache = new DocumentCache(10 * 1024 * 1024);
    cache.set('sa', 1, record('a', 1));
    const first = cache.get('sa');
    expect(cache.get('sa')).toBe(first);
    for (let i = 2; i <= DECODED_ENTRIES_MAX + 1; i++) {
      cache.set(`s${i}`, i, record(`${i}`, i));
      cache.get(`s${i}`);
    }
    const again = cache.get('sa');
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });

  it('never answers what was not set last, and stays within its budget (random operations on two caches of one budget)', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), cache: fc.nat(1), id: fc.nat(40), docid: fc.integer({ min: 1, max: 60 }), pad: fc.nat(600) }),
      fc.record({ kind: fc.constant('delete' as const), cache: fc.nat(1), id: fc.nat(40) }),
      fc.record({ kind: fc.constant('get' as const), cache: fc.nat(1), id: fc.nat(40) }),
      fc.record({ kind: fc.constant('byDocid' as const), cache: fc.nat(1), docid: fc.integer({ min: 1, max: 60 }) }),
      fc.record({ kind: fc.constant('clear' as const), cache: fc.nat(1) }));
    fc.assert(fc.property(fc.integer({ min: 0, max: 20_000 }), fc.array(op, { maxLength: 300 }), (bytesMax, ops) => {
      const budget = new DocumentCacheBudget(bytesMax);
      const caches = [new DocumentCache(budget), new DocumentCache(budget)];
      // What each cache was last given per key (the cache holds a subset of it).
      const models = [new Map<string, { docid: number; pad: number }>(), new Map<string, { docid: number; pad: number }>()];
      for (const o of ops) {
        const cache = caches[o.cache] as DocumentCache;
        const model = models[o.cache] as Map<string, { docid: number; pad: number }>;
        if (o.kind === 'set') {
          const key = `s${o.id}`;
          for (const [k, v] of model) if (v.docid === o.docid && k !== key) model.delete(k);
          model.set(key, { docid: o.docid, pad: o.pad });
          cache.set(key, o.docid, record(String(o.id), o.docid, 1, o.pad));
        } else if (o.kind === 'delete') {
          model.delete(`s${o.id}`);
          cache.delete(`s${o.id}`);
        } else if (o.kind === 'clear') {
          model.clear();
          cache.clear();
          expect(cache.size).toBe(0);
        } else {
          const doc = o.kind === 'get' ? cache.get(`s${o.id}`) : cache.getByDocid(o.docid);
          if (doc !== undefined) {
            const expected = model.get(`s${String(doc.id)}`);
            expect(expected).toBeDefined();
            expect(doc.docid).toBe(expected?.docid);
            expect(doc.body.pad).toBe('x'.repeat(expected?.pad ?? 0));
            if (o.kind === 'get') expect(doc.id).toBe(String(o.id));
            else expect(doc.docid).toBe(o.docid);
          }
        }
        expect(budget.bytes).toBeLessThanOrEqual(bytesMax);
      }
      for (const cache of caches) cache.clear();
      expect(budget.bytes).toBe(0);
    }), { numRuns: 200 });
  });
});
