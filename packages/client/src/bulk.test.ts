import { importInBatches, ndjsonValues, type RestoreReport } from './bulk.js';
import { BadRequestError } from './errors.js';

/** A fake RESTORE: refuses documents with `bad`, reports the rest indexed. */
function fakeRestore() {
  const bodies: string[] = [];
  const restore = async (ndjson: string): Promise<RestoreReport> => {
    bodies.push(ndjson);
    const docs = ndjson.split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l) as { _id: number; bad?: boolean });
    const items = docs.map((d) => (d.bad
      ? { status: 400, type: 'Bad Request', code: 'type_mismatch', message: 'Bad Request: no' }
      : { _id: d._id, _version: 1 }));
    const indexed = docs.filter((d) => !d.bad).length;
    return { prepared: indexed, processed: indexed, indexed, total: docs.length, items };
  };
  return { bodies, restore };
}

describe('importInBatches', () => {
  it('sends NDJSON batches of batchSize, reports progress after each and the refused documents by position', async () => {
    const { bodies, restore } = fakeRestore();
    const progress: unknown[] = [];
    async function* documents() {
      for (let i = 0; i < 25; i++) yield { _id: i, ...(i === 3 || i === 17 ? { bad: true } : {}) };
    }
    const summary = await importInBatches(documents(), restore, { batchSize: 10, onProgress: (p) => progress.push(p) });
    expect(bodies.map((b) => b.split('\n').filter(Boolean).length)).toEqual([10, 10, 5]);
    expect(bodies[0]!.endsWith('\n')).toBe(true);
    expect(progress).toEqual([
      { sent: 10, indexed: 9, failed: 1, batches: 1 },
      { sent: 20, indexed: 18, failed: 2, batches: 2 },
      { sent: 25, indexed: 23, failed: 2, batches: 3 },
    ]);
    expect(summary.failures.map((f) => f.position)).toEqual([3, 17]);
    expect(summary.failures[0]!.error).toBeInstanceOf(BadRequestError);
    expect(summary.failures[0]!.error.code).toBe('type_mismatch');
  });

  it('ends a batch at batchBytes too; nothing to send, no request', async () => {
    const { bodies, restore } = fakeRestore();
    await importInBatches([{ _id: 1, t: 'x'.repeat(100) }, { _id: 2, t: 'y'.repeat(100) }, { _id: 3 }], restore, { batchBytes: 150 });
    expect(bodies.map((b) => b.split('\n').filter(Boolean).length)).toEqual([2, 1]);
    const empty = fakeRestore();
    expect(await importInBatches([], empty.restore)).toEqual({ sent: 0, indexed: 0, failed: 0, batches: 0, failures: [] });
    expect(empty.bodies).toEqual([]);
  });

  it('a batch refused as a whole throws', async () => {
    await expect(importInBatches([{ a: 1 }], async () => { throw new Error('refused'); })).rejects.toThrow('refused');
    await expect(importInBatches([{ a: 1 }], fakeRestore().restore, { batchSize: 0 })).rejects.toThrow(TypeError);
  });
});

describe('ndjsonValues', () => {
  it('parses values split anywhere across chunks, multi-byte characters included; blank lines and a missing last newline are fine', async () => {
    const text = '{"a":"é"}\n\n{"b":[1,2]}\r\n{"c":"€"}';
    const bytes = Buffer.from(text);
    async function* chunks() {
      for (let i = 0; i < bytes.length; i += 3) yield bytes.subarray(i, i + 3);
    }
    const values: unknown[] = [];
    for await (const v of ndjsonValues(chunks())) values.push(v);
    expect(values).toEqual([{ a: 'é' }, { b: [1, 2] }, { c: '€' }]);
  });
});
