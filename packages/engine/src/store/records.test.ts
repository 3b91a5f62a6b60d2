import { spawnSync } from 'node:child_process';
import { Encoder } from '@msgpack/msgpack';
import { decodeDocumentRecord, decodeOplogEntry, encodeBody, encodeDocumentRecord, encodeOplogEntry } from './records.js';

describe('records', () => {
  test('a body reads back as JSON would keep it: undefined fields dropped, undefined items null, large integers exact', () => {
    const body = {
      text: 'é☃𝄞', n: 7, big: 2 ** 40, neg: -(2 ** 40), max: Number.MAX_SAFE_INTEGER, f: 1.5, flag: true, none: null, gone: undefined,
      list: [1, undefined, 'x'], nested: { deep: [{ k: 'v' }] }, bytes: new Uint8Array([1, 2, 3]), long: 'y'.repeat(70_000),
    };
    const doc = decodeDocumentRecord(encodeDocumentRecord({ id: 'a', docid: 3, version: 2, seq: 9 }, encodeBody(body)));
    expect(doc).toEqual({
      id: 'a', docid: 3, version: 2, seq: 9,
      body: {
        text: 'é☃𝄞', n: 7, big: 2 ** 40, neg: -(2 ** 40), max: Number.MAX_SAFE_INTEGER, f: 1.5, flag: true, none: null,
        list: [1, null, 'x'], nested: { deep: [{ k: 'v' }] }, bytes: new Uint8Array([1, 2, 3]), long: 'y'.repeat(70_000),
      },
    });
    const entry = decodeOplogEntry(encodeOplogEntry({ seq: 9, id: 'a', docid: 3, version: 2, op: 'put' }, encodeBody(body)));
    expect(entry.body).toEqual(doc.body);
  });

  test('the bytes of an ordinary body are the ones @msgpack/msgpack writes (records written before read the same)', () => {
    const body = { name: 'pkg', size: 1234, tags: ['a', 'b'], maintainer: { name: 'X', email: 'x@example.org' }, ratio: 0.25 };
    expect(Buffer.from(encodeBody(body)).equals(Buffer.from(new Encoder({ ignoreUndefined: true }).encode(body)))).toBe(true);
  });

  test('what is not data is refused', () => {
    expect(() => encodeBody({ f: () => 1 } as unknown as Record<string, unknown>)).toThrow(/function/);
    expect(() => encodeBody({ s: Symbol('x') } as unknown as Record<string, unknown>)).toThrow();
  });

  test('encoded bodies stay intact while more are encoded (the encoder hands out slices of a shared buffer)', () => {
    const held = Array.from({ length: 5000 }, (_, i) => [i, encodeBody({ i, pad: 'z'.repeat(i % 300) })] as const);
    for (const [i, bytes] of held) {
      expect(decodeDocumentRecord(encodeDocumentRecord({ id: i, docid: 1, version: 1, seq: 1 }, bytes)).body.i).toBe(i);
    }
  });
});

describe('the encoder buffer', () => {
  /** ArrayBuffer bytes `body` leaves behind in a fresh process (a test runner's heap holds its other suites' buffers). */
  function buffersLeftBy(body: string): number {
    const script = `import { encodeBody } from ${JSON.stringify(new URL('./records.js', import.meta.url).href)};
      // V8 frees array buffers' memory on a background sweeper after gc(): let it finish before counting.
      const buffers = async () => { gc(); await new Promise((resolve) => setTimeout(resolve, 100)); gc(); return process.memoryUsage().arrayBuffers; };
      const before = await buffers();
      ${body}
      console.log(JSON.stringify((await buffers()) - before));`;
    const run = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    expect(run.stderr).toBe('');
    return JSON.parse(run.stdout) as number;
  }

  it('is not kept at the size one large body grew it to', () => {
    // A 1 MB string is reserved 3 bytes per unit, and msgpackr grows its buffer to 4× that: 12 MB.
    expect(buffersLeftBy(`
      let bytes = encodeBody({ digits: '9'.repeat(1_000_000) });
      if (bytes.byteLength < 1_000_000) throw new Error('not encoded');
      bytes = undefined;
      encodeBody({ small: 1 });`)).toBeLessThan(2 * 1024 * 1024);
  });

  it('is not kept grown by a body that could not be encoded', () => {
    expect(buffersLeftBy(`
      try { encodeBody({ digits: '9'.repeat(1_000_000), f: () => 1 }); throw new Error('encoded'); }
      catch (err) { if (!/a function cannot be stored/.test(err.message)) throw err; }`)).toBeLessThan(2 * 1024 * 1024);
  });
});
