import { cachedBytes, DocumentCache, DocumentCacheBudget, estimateDocumentBytes } from './document-cache.js';
import { cachedForm, JsonDocument } from './json-document.js';
import type { StoredDocument } from './types.js';

function doc(id: string, docid: number, version = 1): StoredDocument {
  return { id, docid, version, seq: docid, body: { id } };
}

describe('DocumentCache', () => {
  it('evicts the least recently used entries beyond its byte budget', () => {
    const cache = new DocumentCache(300);
    cache.set('sa', doc('a', 1), 100);
    cache.set('sb', doc('b', 2), 100);
    cache.set('sc', doc('c', 3), 100);
    expect(cache.get('sa')?.id).toBe('a'); // a is now the most recent
    cache.set('sd', doc('d', 4), 100); // evicts b, the least recently used
    expect(cache.get('sb')).toBeUndefined();
    expect(cache.get('sa')?.id).toBe('a');
    expect(cache.get('sc')?.id).toBe('c');
    expect(cache.get('sd')?.id).toBe('d');
    expect(cache.bytes).toBe(300);
    expect(cache.size).toBe(3);
  });

  it('replaces an entry in place and keeps the byte count exact', () => {
    const cache = new DocumentCache(1000);
    cache.set('sa', doc('a', 1, 1), 100);
    cache.set('sa', doc('a', 1, 2), 250);
    expect(cache.get('sa')?.version).toBe(2);
    expect(cache.bytes).toBe(250);
    cache.delete('sa');
    expect(cache.bytes).toBe(0);
    expect(cache.size).toBe(0);
  });

  it('does not cache a document larger than the whole budget, and drops its older entry', () => {
    const cache = new DocumentCache(100);
    cache.set('sa', doc('a', 1, 1), 50);
    cache.set('sa', doc('a', 1, 2), 101);
    expect(cache.get('sa')).toBeUndefined();
    expect(cache.bytes).toBe(0);
  });

  it('does not cache a document over 1/64 of a large budget: one huge document would push out dozens', () => {
    const budget = 64 * 1024 * 1024;
    const cache = new DocumentCache(budget);
    cache.set('ordinary', doc('ordinary', 1), 4096);
    cache.set('huge', doc('huge', 2), budget / 64 + 1);
    cache.set('share', doc('share', 3), budget / 64);
    expect(cache.get('ordinary')?.id).toBe('ordinary');
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.get('share')?.id).toBe('share');
    // A small budget still takes entries up to 64 KiB (or itself).
    const small = new DocumentCache(200 * 1024);
    small.set('a', doc('a', 1), 64 * 1024);
    small.set('b', doc('b', 2), 64 * 1024 + 1);
    expect(small.get('a')?.id).toBe('a');
    expect(small.get('b')).toBeUndefined();
  });

  it('finds documents by docid and forgets the docid of a re-created document', () => {
    const cache = new DocumentCache(1000);
    cache.set('sa', doc('a', 1), 10);
    expect(cache.getByDocid(1)?.id).toBe('a');
    cache.set('sa', doc('a', 7), 10); // deleted and re-created elsewhere: a new docid
    expect(cache.getByDocid(1)).toBeUndefined();
    expect(cache.getByDocid(7)?.id).toBe('a');
    cache.delete('sa');
    expect(cache.getByDocid(7)).toBeUndefined();
  });

  it('find counts a hit and makes the entry the most recent, but leaves a miss uncounted', () => {
    const cache = new DocumentCache(200);
    cache.set('sa', doc('a', 1), 100);
    cache.set('sb', doc('b', 2), 100);
    expect(cache.find('sa')?.id).toBe('a');
    expect(cache.find('sz')).toBeUndefined();
    expect(cache.hits).toBe(1);
    expect(cache.misses).toBe(0);
    cache.set('sc', doc('c', 3), 100); // evicts b: a was found after it
    expect(cache.find('sb')).toBeUndefined();
    expect(cache.find('sa')?.id).toBe('a');
  });

  it('counts hits and misses; a zero budget caches nothing', () => {
    const cache = new DocumentCache(0);
    cache.set('sa', doc('a', 1), 1);
    expect(cache.get('sa')).toBeUndefined();
    expect(cache.misses).toBe(1);
    expect(cache.hits).toBe(0);
  });

  it('caches sharing a budget are bounded together, least recently used of any cache first out', () => {
    const budget = new DocumentCacheBudget(300);
    const one = new DocumentCache(budget);
    const two = new DocumentCache(budget);
    one.set('sa', doc('a', 1), 100);
    two.set('sb', doc('b', 2), 100);
    one.set('sc', doc('c', 3), 100);
    expect(budget.bytes).toBe(300);
    expect(one.get('sa')?.id).toBe('a'); // a is now more recent than b
    two.set('sd', doc('d', 4), 100); // over 300 together: b (the other cache's, least recent) goes
    expect(two.get('sb')).toBeUndefined();
    expect(one.get('sa')?.id).toBe('a');
    expect(one.bytes + two.bytes).toBe(300);
    expect(budget.bytes).toBe(300);
    // Each alone under its own bound would have kept everything; together they never pass the one budget.
    for (let i = 0; i < 20; i++) (i % 2 === 0 ? one : two).set(`s${i}x`, doc(`${i}x`, 10 + i), 100);
    expect(budget.bytes).toBeLessThanOrEqual(300);
    expect(one.size + two.size).toBe(3);
  });

  it('clearing one cache of a shared budget keeps the others', () => {
    const budget = new DocumentCacheBudget(1000);
    const one = new DocumentCache(budget);
    const two = new DocumentCache(budget);
    one.set('sa', doc('a', 1), 100);
    two.set('sb', doc('b', 2), 100);
    one.set('sc', doc('c', 3), 100);
    one.clear();
    expect(budget.bytes).toBe(100);
    expect(two.get('sb')?.id).toBe('b');
    two.set('sd', doc('d', 4), 950); // evicts b; the cleared entries are no longer in the order
    expect(two.get('sb')).toBeUndefined();
    expect(budget.bytes).toBe(950);
  });
});

describe('cachedForm', () => {
  it('keeps a plain document as its JSON text, its body parsed anew on each use', () => {
    const stored: StoredDocument = { id: 'a', docid: 3, version: 2, seq: 9, term: 4, originSeq: 7, body: { name: 'ä', n: [1, 2.5, null, true], o: { x: 'y' } } };
    const cached = cachedForm(stored);
    expect(cached).toBeInstanceOf(JsonDocument);
    expect(cached.bodyJson).toBe(JSON.stringify(stored.body));
    expect({ id: cached.id, docid: cached.docid, version: cached.version, seq: cached.seq, term: cached.term, originSeq: cached.originSeq })
      .toEqual({ id: 'a', docid: 3, version: 2, seq: 9, term: 4, originSeq: 7 });
    expect(cached.body).toEqual(stored.body);
    // Nothing decoded stays with the entry: a caller may not keep the cache's memory alive through it.
    expect(cached.body).not.toBe(cached.body);
    expect(cachedForm(cached)).toBe(cached);
  });

  it('keeps decoded what its JSON would not give back exactly, or what carries more than a body', () => {
    const decoded = (body: StoredDocument['body'], extra: Partial<StoredDocument> = {}): StoredDocument => ({ id: 'a', docid: 1, version: 1, seq: 1, body, ...extra });
    for (const stored of [
      decoded({ bytes: new Uint8Array([1, 2]) }),
      decoded({ zero: -0 }),
      decoded({ when: new Date(0) }),
      decoded({ a: 1 }, { content: [{ type: 'text/plain', volume: 1, offset: 0, size: 1, crc: 0 }] }),
      decoded({ a: 1 }, { indexed: { a: 1, secret: 2 } }),
    ]) {
      expect(cachedForm(stored)).toBe(stored);
    }
  });

  it('estimates a text entry by its JSON, a decoded one by its record', () => {
    const text = cachedForm({ id: 'a', docid: 1, version: 1, seq: 1, body: { a: 'bcd' } });
    expect(cachedBytes(text, 1000)).toBe(cachedBytes(cachedForm({ id: 'b', docid: 2, version: 1, seq: 2, body: { b: 'cde' } }), 10));
    expect(cachedBytes(text, 1000)).toBeGreaterThanOrEqual(2 * (text.bodyJson?.length ?? 0));
    expect(cachedBytes(doc('a', 1), 1000)).toBe(estimateDocumentBytes(1000));
  });
});
