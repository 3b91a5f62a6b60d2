import { ChunkCache } from './chunk-cache.js';

describe('ChunkCache', () => {
  it('evicts the least recently used entry and releases it', () => {
    const released: number[] = [];
    const cache = new ChunkCache({ entriesMax: 2, ttlMs: 0, release: (v) => released.push(v) });
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1); // a is now the most recent
    cache.set('c', 3);
    expect(released).toEqual([2]);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    expect(cache.get('c')).toBe(3);
    expect(cache.stats()).toEqual({ hits: 3, misses: 1, evictions: 1, expirations: 0, entries: 2 });
  });

  it('expires entries after the time to live, counting a miss', () => {
    let now = 1000;
    const released: number[] = [];
    const cache = new ChunkCache({ entriesMax: 10, ttlMs: 500, release: (v) => released.push(v), now: () => now });
    cache.set('a', 1);
    now += 499;
    expect(cache.get('a')).toBe(1);
    now += 1;
    expect(cache.get('a')).toBeUndefined();
    expect(released).toEqual([1]);
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 1, expirations: 1, entries: 0 });
  });

  it('never expires with a time to live of 0', () => {
    let now = 0;
    const cache = new ChunkCache({ entriesMax: 10, ttlMs: 0, release: () => undefined, now: () => now });
    cache.set('a', 1);
    now = 1e12;
    expect(cache.get('a')).toBe(1);
  });

  it('releases the previous value when a key is set again', () => {
    const released: number[] = [];
    const cache = new ChunkCache({ entriesMax: 10, ttlMs: 0, release: (v) => released.push(v) });
    cache.set('a', 1);
    cache.set('a', 2);
    expect(released).toEqual([1]);
    expect(cache.get('a')).toBe(2);
  });

  it('refuses a size below 1', () => {
    expect(() => new ChunkCache({ entriesMax: 0, ttlMs: 0, release: () => undefined })).toThrow(RangeError);
  });
});
