import fc from 'fast-check';
import { TesseraError } from '@tessera/errors';
import { RequestBodyStream, STREAM_PIECE_COPY_BYTES, type BodyStreamOwner } from './body-stream.js';

class Owner implements BodyStreamOwner {
  pulls = 0;
  bodyPulled(): void {
    this.pulls++;
  }
}

async function readAll(stream: RequestBodyStream): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe('RequestBodyStream', () => {
  test('short pieces are coalesced, long ones kept as they are, order preserved; the count of buffered bytes follows', async () => {
    const owner = new Owner();
    const stream = new RequestBodyStream(owner, false);
    const long = Buffer.alloc(STREAM_PIECE_COPY_BYTES, 7);
    for (let i = 0; i < 1000; i++) stream.push(Buffer.from([i & 0xff]));
    stream.push(long);
    stream.push(Buffer.from('xy'));
    expect(stream.bufferedBytes).toBe(1000 + long.length + 2);
    stream.end();
    const chunks = await readAll(stream);
    // 1000 one-byte pieces → one coalesced Buffer; the long piece is the very same Buffer.
    expect(chunks).toHaveLength(3);
    expect(chunks[1]).toBe(long);
    expect(Buffer.concat(chunks)).toEqual(Buffer.concat([Buffer.from(Array.from({ length: 1000 }, (_, i) => i & 0xff)), long, Buffer.from('xy')]));
    expect(stream.bufferedBytes).toBe(0);
    expect(stream.bufferedBytesPeak).toBe(1000 + long.length + 2);
    expect(owner.pulls).toBe(4);
  });

  test('a failure comes after the bytes received before it', async () => {
    const stream = new RequestBodyStream(new Owner(), false);
    stream.push(Buffer.from('abc'));
    const error = new TesseraError('http_body_too_large', 413, 'too large');
    stream.fail(error);
    stream.push(Buffer.from('ignored'));
    const iterator = stream[Symbol.asyncIterator]();
    expect((await iterator.next()).value!.toString()).toBe('abc');
    await expect(iterator.next()).rejects.toBe(error);
    expect(stream.error).toBe(error);
  });

  test('a waiting next() gets the piece directly, the end, or the failure', async () => {
    const stream = new RequestBodyStream(new Owner(), false);
    const first = stream.next();
    stream.push(Buffer.from('a'));
    expect((await first).value!.toString()).toBe('a');
    const second = stream.next();
    stream.end();
    expect(await second).toEqual({ done: true, value: undefined });
    const failing = new RequestBodyStream(new Owner(), false);
    const pending = failing.next();
    failing.fail(new TesseraError('http_body_aborted', 400, 'gone'));
    await expect(pending).rejects.toMatchObject({ code: 'http_body_aborted' });
  });

  test('break in for await frees the buffer and drops later pieces; discard makes later reads a misuse', async () => {
    const stream = new RequestBodyStream(new Owner(), false);
    stream.push(Buffer.alloc(10_000));
    stream.push(Buffer.alloc(10_000));
    for await (const chunk of stream) {
      expect(chunk.length).toBe(10_000);
      break;
    }
    expect(stream.bufferedBytes).toBe(0);
    stream.push(Buffer.alloc(5));
    expect(stream.bufferedBytes).toBe(0);
    stream.discard();
    await expect(stream.next()).rejects.toMatchObject({ code: 'http_body_stream_misuse', status: 500 });
  });

  test('fast-check: any sequence of piece sizes reads back as the same bytes', async () => {
    await fc.assert(fc.asyncProperty(
      fc.array(fc.uint8Array({ minLength: 1, maxLength: 2 * STREAM_PIECE_COPY_BYTES }), { maxLength: 40 }),
      fc.array(fc.boolean(), { maxLength: 40 }),
      async (pieces, readBetween) => {
        const stream = new RequestBodyStream(new Owner(), false);
        const out: Buffer[] = [];
        for (let i = 0; i < pieces.length; i++) {
          stream.push(Buffer.from(pieces[i]!));
          if (readBetween[i] === true && stream.bufferedBytes > 0) out.push((await stream.next()).value!);
        }
        stream.end();
        out.push(...await readAll(stream));
        expect(Buffer.concat(out)).toEqual(Buffer.concat(pieces.map((p) => Buffer.from(p))));
      },
    ), { numRuns: 200 });
  });
});
