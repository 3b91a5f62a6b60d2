/**
 * What one document may cost (API.md §13, docs/documents.md): each limit is a
 * 400 with its code, refused before the index, its schema or the document is
 * touched; a small body naming a huge document (1,000,000 array items) is
 * refused at once; and a bounded mini-fuzz of hostile bodies in every codec
 * gets 4xx answers, never a 5xx, from a server that keeps answering.
 */
import { encode } from '@msgpack/msgpack';
import { call, removeDir, startServer, tempDataDir, type Server } from './harness.js';
import { random } from './random.js';

let server: Server;

beforeAll(async () => {
  // Small limits for the just-under/just-over cases; defaults are checked in the unit tests.
  server = await startServer({
    args: ['--port', '0', '--data', tempDataDir(), '--shards', '1', '--replicas', '0',
      '--values-per-field-max', '100', '--document-values-max', '300', '--string-bytes-max', '1000', '--document-words-max', '400'],
  });
  expect((await call(server, 'PUT', '/limits/seed', { title: 'seed', n: 1 })).status).toBe(200);
});

afterAll(async () => {
  expect(await server.stop()).toBe(0);
  removeDir(server.dataDir);
});

/** Each code's message: the error body names the limit as well as its `code` (API.md §4.2). */
const MESSAGES: Record<string, RegExp> = {
  // The second form is the decoder's (arrayItemsMax = valuesPerFieldMax): one array over the limit is refused before the body is built.
  too_many_values: /^Bad Request: (Field '[^']+' has more than \d+ values|Body has an array of more than \d+ items)$/,
  document_too_large: /^Bad Request: Document (text )?has more than \d+ (values|words)$/,
  value_too_large: /^Bad Request: A value of field '[^']+' is longer than \d+ bytes$/,
};

function expectCode(r: { status: number; json: any }, code: string): void {
  expect(r.status).toBe(400);
  expect(r.json.code).toBe(code);
  expect(r.json.message).toMatch(MESSAGES[code]!);
}

async function schemaOf(index: string): Promise<unknown> {
  const r = await call(server, 'GET', `/${index}/`);
  expect(r.status).toBe(200);
  return r.json.schema ?? r.json._schema ?? r.json;
}

/** The write is refused with `code` and leaves no document and the same schema behind. */
async function expectRefused(method: string, id: string, body: unknown, code: string): Promise<void> {
  const before = await schemaOf('limits');
  expectCode(await call(server, method, `/limits/${id}`, body), code);
  expect((await call(server, 'GET', `/limits/${id}`)).status).toBe(404);
  expect(await schemaOf('limits')).toEqual(before);
}

it('values per field: just under is stored, just over is 400 too_many_values (PUT and UPDATE)', async () => {
  const under = Array.from({ length: 100 }, (_, i) => i);
  expect((await call(server, 'PUT', '/limits/under', { fresh_under: under })).status).toBe(200);
  const over = Array.from({ length: 101 }, (_, i) => i);
  await expectRefused('PUT', 'over', { fresh_over: over }, 'too_many_values');
  await expectRefused('UPDATE', 'over?upsert', { fresh_over: over }, 'too_many_values');
  // Nested arrays count for their field.
  await expectRefused('PUT', 'nested', { fresh_nested: [over.slice(0, 60), over.slice(0, 60)] }, 'too_many_values');
});

it('values per document: 400 document_too_large', async () => {
  const body: Record<string, number[]> = {};
  for (let f = 0; f < 4; f++) body[`fresh_f${f}`] = Array.from({ length: 80 }, (_, i) => i);
  await expectRefused('PUT', 'values', body, 'document_too_large');
});

it('string bytes: 1000 bytes is stored, 1001 (or 334 three-byte characters) is 400 value_too_large', async () => {
  expect((await call(server, 'PUT', '/limits/str', { fresh_str: 'x'.repeat(1000) })).status).toBe(200);
  await expectRefused('PUT', 'str2', { fresh_long: 'x'.repeat(1001) }, 'value_too_large');
  await expectRefused('PUT', 'str3', { fresh_wide: '€'.repeat(334) }, 'value_too_large');
});

it('words per document: 400 document_too_large', async () => {
  const text = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
  expect((await call(server, 'PUT', '/limits/words', { fresh_words_ok: text(150), other: text(150) })).status).toBe(200);
  await expectRefused('PUT', 'words2', { fresh_words_a: text(200), fresh_words_b: text(201) }, 'document_too_large');
});

it('RESTORE items are held to the same limits', async () => {
  const lines = `${JSON.stringify({ _id: 'r1', a: 1 })}\n${JSON.stringify({ _id: 'r2', fresh_restore: Array.from({ length: 101 }, () => 1) })}\n`;
  const r = await call(server, 'RESTORE', '/limits/', lines, { 'content-type': 'application/x-ndjson' });
  expect(r.status).toBeLessThan(500);
  expect((await call(server, 'GET', '/limits/r2')).status).toBe(404);
});

it('a JSON array of 1,000,000 numbers is a 400 with default limits too', async () => {
  const other = await startServer({ args: ['--port', '0', '--data', tempDataDir(), '--shards', '1', '--replicas', '0'] });
  try {
    const body = `{"values":[${Array.from({ length: 1_000_000 }, (_, i) => i % 1000).join(',')}]}`;
    for (const method of ['PUT', 'UPDATE']) {
      expectCode(await call(other, method, '/big/1?upsert', body, { 'content-type': 'application/json' }), 'too_many_values');
    }
    const packed = Buffer.from(encode({ values: Array.from({ length: 1_000_000 }, (_, i) => i) }));
    expectCode(await call(other, 'PUT', '/big/2', packed, { 'content-type': 'application/msgpack' }), 'too_many_values');
    const s = await call(other, 'PUT', '/big/3', JSON.stringify({ s: 'x'.repeat(8 * 1024 * 1024) }), { 'content-type': 'application/json' });
    expectCode(s, 'value_too_large');
    expect((await call(other, 'GET', '/big/1')).status).toBe(404);
    expect((await call(other, 'GET', '/big/3')).status).toBe(404);
  } finally {
    expect(await other.stop()).toBe(0);
    removeDir(other.dataDir);
  }
}, 60_000);

it('a mini-fuzz of hostile bodies in three codecs gets no 5xx and the server still answers', async () => {
  const draw = random(18);
  const valid = { title: 'fuzz', n: 3, tags: ['a', 'b'], nested: { x: 1.5, y: [true, null] } };
  const bases: Array<[string, Buffer]> = [
    ['application/json', Buffer.from(`// comment\n${JSON.stringify(valid)}`)],
    ['application/msgpack', Buffer.from(encode(valid))],
    ['application/yaml', Buffer.from('title: fuzz\nn: 3\ntags: [a, b]\nnested: {x: 1.5, y: [true, null]}\n')],
  ];
  const hostile: Array<[string, Buffer]> = [
    ['application/json', Buffer.from(`{"a":${'['.repeat(100_000)}`)],
    ['application/json', Buffer.from(`{"n":${'9'.repeat(1_000_000)}}`)],
    ['application/json', Buffer.from(`{${Array.from({ length: 10_001 }, (_, i) => `"f${i}":1`).join(',')}}`)],
    ['application/msgpack', Buffer.from([0x81, 0xa1, 0x61, 0xdb, 0xff, 0xff, 0xff, 0xff])],
    ['application/msgpack', Buffer.from([0x81, 0xa1, 0x61, 0xdd, 0xff, 0xff, 0xff, 0xff])],
    ['application/yaml', Buffer.from(`a: &a [x,x,x,x,x,x,x,x,x,x]\n${Array.from({ length: 9 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)}]`).join('\n')}\n`)],
  ];
  const statuses = new Map<number, number>();
  for (let i = 0; i < 300; i++) {
    let type: string;
    let body: Buffer;
    if (i < hostile.length) [type, body] = hostile[i]!;
    else {
      const [t, base] = bases[i % bases.length]!;
      type = t;
      body = Buffer.from(base);
      const mutation = Math.floor(draw() * 3);
      if (mutation === 0) body = body.subarray(0, Math.floor(draw() * body.length));
      else if (mutation === 1) for (let k = 0; k < 3; k++) body[Math.floor(draw() * body.length)] = Math.floor(draw() * 256);
      else {
        const [, other] = bases[Math.floor(draw() * bases.length)]!;
        body = Buffer.concat([body.subarray(0, Math.floor(draw() * body.length)), other.subarray(Math.floor(draw() * other.length))]);
      }
    }
    const r = await call(server, i % 2 === 0 ? 'PUT' : 'UPDATE', `/fuzz/${i}?upsert`, body, { 'content-type': type });
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    expect(r.status).toBeLessThan(500);
  }
  expect([...statuses.keys()].some((s) => s >= 400)).toBe(true);
  expect((await call(server, 'GET', '/limits/seed')).status).toBe(200);
}, 120_000);
