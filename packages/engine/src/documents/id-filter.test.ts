import { IdFilter } from './id-filter.js';

/** The IDs in batches of two, as LevelDB's `nextv` gives them. */
async function* idsOf(ids: Array<string | number>): AsyncGenerator<Array<string | number>> {
  for (let i = 0; i < ids.length; i += 2) yield ids.slice(i, i + 2);
}

describe('IdFilter', () => {
  it('answers "maybe" for every key until it is complete', () => {
    const filter = new IdFilter();
    expect(filter.mayHave('sa')).toBe(true);
    filter.markComplete();
    expect(filter.mayHave('sa')).toBe(false);
  });

  it('never says "no" for a key added, across the parts it grows, and rarely "maybe" for others', () => {
    const filter = new IdFilter();
    filter.markComplete();
    const n = 50_000; // past three parts (the first holds 16,384 keys)
    for (let i = 0; i < n; i++) filter.add(`sdoc${i}`);
    for (let i = 0; i < n; i++) if (!filter.mayHave(`sdoc${i}`)) throw new Error(`sdoc${i} added but not found`);
    let maybes = 0;
    for (let i = 0; i < n; i++) if (filter.mayHave(`sother${i}`)) maybes++;
    expect(maybes / n).toBeLessThan(0.03);
    // 12 bits a key, parts doubling: within 4× of the keys' share.
    expect(filter.bytes).toBeLessThan((4 * n * 12) / 8);
  });

  it('fill adds the stored IDs (their keys) and then completes; stopped, it stays incomplete', async () => {
    const filter = new IdFilter(2);
    await filter.fill(idsOf(['a', 5, 'b']), () => false);
    expect(filter.mayHave('sb')).toBe(true);
    expect(filter.ready).toBe(true);
    expect(filter.mayHave('sa')).toBe(true);
    expect(filter.mayHave('n5')).toBe(true);
    expect(filter.mayHave('s5')).toBe(false);
    const stopped = new IdFilter();
    await stopped.fill(idsOf(['a']), () => true);
    expect(stopped.ready).toBe(false);
    expect(stopped.mayHave('sz')).toBe(true);
  });
});
