import { GroupCommit, type BatchOutcome } from './group-commit.js';

/** A commit function the test completes by hand, recording every batch. */
function manualCommit() {
  const batches: { changes: number[]; sync: boolean; finish: (outcome?: Error) => void }[] = [];
  let inFlight = 0;
  let inFlightMax = 0;
  const commit = (changes: number[], sync: boolean): Promise<BatchOutcome<number>[]> => {
    inFlight++;
    inFlightMax = Math.max(inFlightMax, inFlight);
    return new Promise((resolve, reject) => {
      batches.push({
        changes: [...changes],
        sync,
        finish: (error?: Error) => {
          inFlight--;
          if (error) reject(error);
          else resolve(changes.map((c) => (c < 0 ? { ok: false, error: new Error(`refused ${c}`) } : { ok: true, value: c * 10 })));
        },
      });
    });
  };
  return { batches, commit, inFlightMax: () => inFlightMax };
}

/** Resolves once `predicate` holds, checking after every turn of the event loop. */
async function until(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((resolve) => setImmediate(resolve));
}

describe('GroupCommit', () => {
  it('submitMany answers every change in its place once all are written, across batches, failures included', async () => {
    const m = manualCommit();
    const gc = new GroupCommit(m.commit, { windowMs: 0, entriesMax: 3 });
    const single = gc.submit(9, false);
    const many = gc.submitMany([1, -2, 3, 4, 5], true);
    let answered = false;
    void many.then(() => (answered = true));
    // 9, 1, -2 fill the first batch; 3, 4, 5 wait for the next.
    await until(() => m.batches.length === 1);
    expect(m.batches[0].changes).toEqual([9, 1, -2]);
    m.batches[0].finish();
    await until(() => m.batches.length === 2);
    expect(m.batches[1]).toMatchObject({ changes: [3, 4, 5], sync: true });
    expect(answered).toBe(false);
    m.batches[1].finish(new Error('disk full'));
    const outcomes = await many;
    expect(outcomes.map((o) => (o.ok ? o.value : o.error.message))).toEqual([10, 'refused -2', 'disk full', 'disk full', 'disk full']);
    expect(await single).toBe(90);
    expect(await gc.submitMany([], false)).toEqual([]);
  });

  it('writes one batch at a time and sends everything queued meanwhile as the next batch', async () => {
    const m = manualCommit();
    const gc = new GroupCommit(m.commit, { windowMs: 0, entriesMax: 100 });
    const first = gc.submit(1, false);
    await until(() => m.batches.length === 1);
    const later = [gc.submit(2, false), gc.submit(3, true), gc.submit(4, false)];
    expect(gc.queued).toBe(3);
    m.batches[0].finish();
    expect(await first).toBe(10);
    await until(() => m.batches.length === 2);
    expect(m.batches[1]).toMatchObject({ changes: [2, 3, 4], sync: true });
    m.batches[1].finish();
    expect(await Promise.all(later)).toEqual([20, 30, 40]);
    expect(m.inFlightMax()).toBe(1);
    expect(m.batches[0].sync).toBe(false);
  });

  it('a pending batch lets the next one go and is answered when its outcomes come; idle waits for them', async () => {
    const durable: { resolve: () => void }[] = [];
    const batches: number[][] = [];
    const gc = new GroupCommit<number, number>(async (changes) => {
      batches.push([...changes]);
      const written = new Promise<void>((resolve) => durable.push({ resolve }));
      return { outcomes: written.then(() => changes.map((c) => ({ ok: true as const, value: c * 10 }))) };
    }, { windowMs: 0, entriesMax: 100 });
    const first = gc.submit(1, true);
    let firstAnswered = false;
    void first.then(() => (firstAnswered = true));
    await until(() => batches.length === 1);
    const second = gc.submit(2, true);
    // The second batch goes while the first still waits for its outcomes.
    await until(() => batches.length === 2);
    expect(firstAnswered).toBe(false);
    let idle = false;
    void gc.idle().then(() => (idle = true));
    durable[0]!.resolve();
    expect(await first).toBe(10);
    await new Promise((resolve) => setImmediate(resolve));
    expect(idle).toBe(false);
    durable[1]!.resolve();
    expect(await second).toBe(20);
    await until(() => idle);
  });

  it('bounds a batch to entriesMax changes; the rest wait for the next', async () => {
    const m = manualCommit();
    const gc = new GroupCommit(m.commit, { windowMs: 0, entriesMax: 4 });
    const all = Array.from({ length: 10 }, (_, i) => gc.submit(i + 1, false));
    await until(() => m.batches.length === 1);
    expect(m.batches[0].changes).toEqual([1, 2, 3, 4]);
    m.batches[0].finish();
    await until(() => m.batches.length === 2);
    expect(m.batches[1].changes).toEqual([5, 6, 7, 8]);
    m.batches[1].finish();
    await until(() => m.batches.length === 3);
    expect(m.batches[2].changes).toEqual([9, 10]);
    m.batches[2].finish();
    expect(await Promise.all(all)).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
  });

  it('rejects every change of a failed batch, answers per change otherwise, and keeps going', async () => {
    const m = manualCommit();
    const gc = new GroupCommit(m.commit, { windowMs: 0, entriesMax: 10 });
    const failed = [gc.submit(1, true), gc.submit(2, false)];
    await until(() => m.batches.length === 1);
    m.batches[0].finish(new Error('disk full'));
    for (const p of failed) await expect(p).rejects.toThrow('disk full');
    const mixed = [gc.submit(3, false), gc.submit(-4, false)];
    await until(() => m.batches.length === 2);
    m.batches[1].finish();
    expect(await mixed[0]).toBe(30);
    await expect(mixed[1]).rejects.toThrow('refused -4');
    await gc.idle();
  });

  it('waits for the window before writing the first change of an idle queue', async () => {
    const m = manualCommit();
    const gc = new GroupCommit(m.commit, { windowMs: 20, entriesMax: 10 });
    const started = Date.now();
    const a = gc.submit(1, false);
    await new Promise((resolve) => setImmediate(resolve));
    const b = gc.submit(2, false);
    await until(() => m.batches.length === 1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);
    expect(m.batches[0].changes).toEqual([1, 2]);
    m.batches[0].finish();
    expect(await Promise.all([a, b])).toEqual([10, 20]);
  });

  it('idle() resolves once nothing is queued or in flight', async () => {
    const m = manualCommit();
    const gc = new GroupCommit(m.commit, { windowMs: 0, entriesMax: 10 });
    await gc.idle();
    const p = gc.submit(1, false);
    let idle = false;
    const waiting = gc.idle().then(() => {
      idle = true;
    });
    await until(() => m.batches.length === 1);
    expect(idle).toBe(false);
    m.batches[0].finish();
    await p;
    await waiting;
    expect(idle).toBe(true);
  });
});
