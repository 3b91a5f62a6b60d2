/**
 * Stored content (API.md §6) over HTTP against the real server: real PNG and
 * PDF files stored, negotiated by Accept and by extension, replaced,
 * unlinked, versioned, persisted across a restart; a 50 MiB blob streamed in
 * and out with the server's peak RSS bounded; a corrupted blob refused while
 * the rest of the document still reads; the separate body limit.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { request } from 'undici';
import { call, peakRssBytes, removeDir, startServer, tempDataDir, type Server } from './harness.js';
import { SERVER_KINDS, startServers } from './cluster-harness.js';



/** A real PNG: `width`×`height` RGB pixels of one colour (signature, IHDR, IDAT, IEND with their CRCs). */
function png(width: number, height: number, rgb: [number, number, number]): Buffer {
  const chunk = (type: string, data: Buffer): Buffer => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'latin1');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type RGB
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3).map((_, i) => rgb[i % 3] as number)]);
  const pixels = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr), chunk('IDAT', deflateSync(pixels)), chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A real one-page PDF with a text line, its cross-reference table at the right offsets. */
function pdf(text: string): Buffer {
  const stream = `BT /F1 24 Tf 72 720 Td (${text}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) out += `${String(offset).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

const PNG = png(16, 8, [200, 30, 60]);
const PNG2 = png(4, 4, [0, 0, 255]);
const PDF = pdf('Hello from Tessera');

function store(server: Server, method: 'PUT' | 'UPDATE', path: string, type: string, bytes: Buffer | string) {
  return call(server, method, path, bytes, { 'content-type': type });
}

describe.each(SERVER_KINDS)('stored content (%s)', (kind) => {
  let server: Server;
  beforeAll(async () => { server = await startServers(kind); });
  afterAll(async () => {
    await server.stop();
    removeDir(server.dataDir);
  });

  it('stores a PNG and a PDF, reads each back byte-identical by Accept and by extension, with INFO and versions', async () => {
    const put = await store(server, 'PUT', '/files/doc1', 'image/png', PNG);
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ _id: 'doc1', _version: 1 });
    expect(put.json).not.toHaveProperty('_data');
    const update = await store(server, 'UPDATE', '/files/doc1', 'application/pdf', PDF);
    expect(update.json).toMatchObject({ _id: 'doc1', _version: 2 });
    // A JSON update keeps the stored entries.
    expect((await call(server, 'UPDATE', '/files/doc1', { title: 'report' })).json).toMatchObject({ title: 'report', _version: 3 });

    const byAcceptPng = await call(server, 'GET', '/files/doc1', undefined, { accept: 'image/png' });
    expect(byAcceptPng.status).toBe(200);
    expect(byAcceptPng.headers['content-type']).toBe('image/png');
    expect(byAcceptPng.bytes.equals(PNG)).toBe(true);
    const byExtension = await call(server, 'GET', '/files/doc1.pdf');
    expect(byExtension.headers['content-type']).toBe('application/pdf');
    expect(byExtension.bytes.equals(PDF)).toBe(true);
    // No Accept (or */*): the default content, the last stored.
    expect((await call(server, 'GET', '/files/doc1')).bytes.equals(PDF)).toBe(true);
    expect((await call(server, 'GET', '/files/doc1', undefined, { accept: '*/*' })).bytes.equals(PDF)).toBe(true);
    // The JSON body is the first entry, matching the serializer types.
    expect((await call(server, 'GET', '/files/doc1', undefined, { accept: 'application/json' })).json).toMatchObject({ title: 'report', _version: 3 });
    // q-values in order; ties go to the later entry.
    expect((await call(server, 'GET', '/files/doc1', undefined, { accept: 'application/pdf;q=0.5, image/png' })).bytes.equals(PNG)).toBe(true);
    expect((await call(server, 'GET', '/files/doc1', undefined, { accept: 'image/*, application/*' })).bytes.equals(PDF)).toBe(true);
    expect((await call(server, 'GET', '/files/doc1', undefined, { accept: 'image/*, application/*;q=0.1' })).bytes.equals(PNG)).toBe(true);

    const info = await call(server, 'INFO', '/files/doc1');
    expect(info.json).toMatchObject({ version: 3 });
    expect(info.json.data).toEqual([
      { content_type: 'application/msgpack', type: 'inplace' },
      { content_type: 'image/png', type: 'stored', volume: 1, offset: expect.any(Number), size: humanSize(PNG.length) },
      { content_type: 'application/pdf', type: 'stored', volume: 1, offset: expect.any(Number), size: humanSize(PDF.length) },
    ]);
    expect((await call(server, 'INFO', '/files/doc1?human=false')).json.data[1].size).toBe(PNG.length);
    // What was indexed: the body's terms and values (§5.8), not the blobs.
    expect(info.json.terms.title).toHaveProperty('Sreport');
    expect(info.json.values).toMatchObject({ 0: 'doc1', 1: 3 });
  });

  it('blobs of several MiB (kept in the pieces they arrived in, down to the volume) read back byte-exact, INFO with their checksum size', async () => {
    const blob = (seed: number, size: number): Buffer => Buffer.from(Uint8Array.from({ length: size }, (_, i) => (i * 131 + seed) & 0xff));
    const a = blob(1, 3 * 1024 * 1024 + 17);
    const b = blob(2, 2 * 1024 * 1024);
    expect((await store(server, 'PUT', '/pieces/big?commit', 'application/octet-stream', a)).status).toBe(200);
    expect((await store(server, 'UPDATE', '/pieces/big', 'image/x-test', b)).json).toMatchObject({ _version: 2 });
    expect((await call(server, 'GET', '/pieces/big', undefined, { accept: 'application/octet-stream' })).bytes.equals(a)).toBe(true);
    expect((await call(server, 'GET', '/pieces/big', undefined, { accept: 'image/x-test' })).bytes.equals(b)).toBe(true);
    const sizes = ((await call(server, 'INFO', '/pieces/big?human=false')).json.data as Array<{ size?: number }>).map((e) => e.size);
    expect(sizes).toEqual([undefined, a.length, b.length]);
  });

  it('DUMP writes _data (base64 in JSON, binary in MessagePack) and RESTORE stores it back', async () => {
    await call(server, 'PUT', '/dumped/one', { name: 'one' });
    await store(server, 'UPDATE', '/dumped/one', 'image/png', PNG);
    await store(server, 'UPDATE', '/dumped/one', 'application/pdf', PDF);
    await call(server, 'PUT', '/dumped/two', { name: 'two' });
    const dump = await call(server, 'DUMP', '/dumped/?schema=false', undefined, { accept: 'application/x-ndjson' });
    const items = dump.text.trim().split('\n').map((l) => JSON.parse(l));
    const one = items.find((i: { _id: string }) => i._id === 'one');
    expect(one._data).toEqual([
      { _content_type: 'image/png', _type: 'stored', _blob: PNG.toString('base64') },
      { _content_type: 'application/pdf', _type: 'stored', _blob: PDF.toString('base64') },
    ]);
    expect(items.find((i: { _id: string }) => i._id === 'two')).not.toHaveProperty('_data');
    const restored = await call(server, 'RESTORE', '/restored/', dump.text, { 'content-type': 'application/x-ndjson' });
    expect(restored.json).toMatchObject({ indexed: 2, total: 2 });
    expect((await call(server, 'GET', '/restored/one.png')).bytes.equals(PNG)).toBe(true);
    expect((await call(server, 'GET', '/restored/one')).bytes.equals(PDF)).toBe(true);
    expect((await call(server, 'GET', '/restored/one', undefined, { accept: 'application/json' })).json).toMatchObject({ name: 'one' });
    // MessagePack: the blobs are binary, byte-exact.
    const packed = await call(server, 'DUMP', '/dumped/one', undefined, { accept: 'application/x-msgpack' });
    expect(Buffer.from(packed.json._data[0]._blob).equals(PNG)).toBe(true);
    // A bad `_data` fails its item alone.
    const bad = await call(server, 'RESTORE', '/restored/', [{ _id: 'x', _data: [{ _content_type: 'image/png', _blob: '%%%' }] }, { _id: 'y' }]);
    expect(bad.json.items[0]).toMatchObject({ status: 400 });
    expect(bad.json.items[1]).toMatchObject({ _id: 'y', _version: 1 });
  });

  it('replaces and unlinks entries: relinked blobs, order of last storing, version bumps, 406 once gone', async () => {
    await store(server, 'PUT', '/files/doc2', 'image/png', PNG);
    await store(server, 'UPDATE', '/files/doc2', 'application/pdf', PDF);
    const before = (await call(server, 'INFO', '/files/doc2')).json.data;
    const replaced = await store(server, 'UPDATE', '/files/doc2.png', 'image/png', PNG2);
    expect(replaced.json._version).toBe(3);
    const after = (await call(server, 'INFO', '/files/doc2')).json.data;
    // Re-storing moves the type to the end with a new blob; the old one is not rewritten.
    expect(after.map((e: { content_type: string }) => e.content_type)).toEqual(['application/msgpack', 'application/pdf', 'image/png']);
    expect(after[2].offset).not.toBe(before[1].offset);
    expect((await call(server, 'GET', '/files/doc2.png')).bytes.equals(PNG2)).toBe(true);
    expect((await call(server, 'GET', '/files/doc2')).bytes.equals(PNG2)).toBe(true);

    const unlinked = await call(server, 'UPDATE', '/files/doc2', '', { 'content-type': 'application/pdf', 'content-length': '0' });
    expect(unlinked.json).toMatchObject({ _version: 4 });
    expect((await call(server, 'INFO', '/files/doc2')).json.data.map((e: { content_type: string }) => e.content_type))
      .toEqual(['application/msgpack', 'image/png']);
    const gone = await call(server, 'GET', '/files/doc2.pdf');
    expect(gone.status).toBe(406);
    expect(gone.json).toMatchObject({ status: 406 });
    // Unlinking an absent type is a no-op that still bumps the version.
    expect((await call(server, 'UPDATE', '/files/doc2', '', { 'content-type': 'text/plain', 'content-length': '0' })).json._version).toBe(5);
    // PUT of JSON replaces the whole document, content included.
    await call(server, 'PUT', '/files/doc2', { plain: true });
    expect((await call(server, 'INFO', '/files/doc2')).json.data).toEqual([{ content_type: 'application/msgpack', type: 'inplace' }]);
    expect((await call(server, 'GET', '/files/doc2')).json).toMatchObject({ plain: true, _version: 6 });
    // PUT of content replaces it too: `{}` plus that one entry.
    await call(server, 'UPDATE', '/files/doc2', { kept: 'no' });
    const putContent = await store(server, 'PUT', '/files/doc2', 'application/pdf', PDF);
    expect(putContent.json).toEqual({ _id: 'doc2', _version: 8, '#docid': expect.any(Number), '#shard': expect.any(Number) });
  });

  it('honours ?version (409, nothing stored), upsert and 404 like any write', async () => {
    await store(server, 'PUT', '/files/doc3', 'image/png', PNG);
    const stale = await call(server, 'UPDATE', '/files/doc3?version=7', PDF, { 'content-type': 'application/pdf' });
    expect(stale.status).toBe(409);
    expect((await call(server, 'INFO', '/files/doc3')).json).toMatchObject({ version: 1 });
    expect((await call(server, 'GET', '/files/doc3.pdf')).status).toBe(406);
    expect((await call(server, 'UPDATE', '/files/doc3?version=1', PDF, { 'content-type': 'application/pdf' })).json._version).toBe(2);
    expect((await call(server, 'UPDATE', '/files/missing', PDF, { 'content-type': 'application/pdf' })).status).toBe(404);
    const upserted = await call(server, 'UPDATE', '/files/missing?upsert', PDF, { 'content-type': 'application/pdf' });
    expect(upserted.json).toMatchObject({ _id: 'missing', _version: 1 });
    expect((await call(server, 'GET', '/files/missing.pdf')).bytes.equals(PDF)).toBe(true);
    expect((await call(server, 'PUT', '/files/doc3?commit', PNG2, { 'content-type': 'image/png' })).json._version).toBe(3);
    expect((await call(server, 'HEAD', '/files/doc3.png')).headers['content-length']).toBe(String(PNG2.length));
    expect((await call(server, 'GET', '/files/doc3', undefined, { accept: 'text/plain' })).status).toBe(406);
  });
});

describe('stored content on disk', () => {
  let dataDir: string;
  let server: Server;
  beforeAll(() => { dataDir = tempDataDir(); });
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('survives a restart, streams a 50 MiB blob in and out with bounded memory, and refuses a corrupted blob alone', async () => {
    server = await startServer({ dataDir, args: ['--port', '0', '--data', dataDir, '--shards', '1', '--content-body-bytes-max', String(60 * 1024 * 1024)] });
    await store(server, 'PUT', '/disk/a', 'image/png', PNG);
    await store(server, 'UPDATE', '/disk/a', 'application/pdf', PDF);
    await call(server, 'UPDATE', '/disk/a', { name: 'a' });

    // 50 MiB in and out; the server's peak RSS (VmHWM) grows by far less than a few copies of it.
    const big = Buffer.alloc(50 * 1024 * 1024);
    for (let i = 0; i < big.length; i += 4096) big.writeUInt32LE((i * 2654435761) >>> 0, i);
    const before = peakRssBytes(server);
    expect((await call(server, 'PUT', '/disk/big?commit', big, { 'content-type': 'application/octet-stream' })).status).toBe(200);
    const res = await request(`${server.url}/disk/big`);
    expect(res.headers['content-length']).toBe(String(big.length));
    let received = 0;
    let matches = true;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      if (!chunk.equals(big.subarray(received, received + chunk.length))) matches = false;
      received += chunk.length;
    }
    expect(received).toBe(big.length);
    expect(matches).toBe(true);
    const growth = peakRssBytes(server) - before;
    expect(growth).toBeLessThan(250 * 1024 * 1024);

    // Restart: everything still there.
    expect(await server.stop()).toBe(0);
    server = await startServer({ dataDir, args: ['--port', '0', '--data', dataDir, '--shards', '1'] });
    expect((await call(server, 'GET', '/disk/a.png')).bytes.equals(PNG)).toBe(true);
    expect((await call(server, 'GET', '/disk/a', undefined, { accept: 'application/json' })).json).toMatchObject({ name: 'a', _version: 3 });

    // Flip one byte inside the PNG blob on disk after a clean stop.
    const info = (await call(server, 'INFO', '/disk/a?human=false')).json;
    const pngEntry = info.data.find((e: { content_type: string }) => e.content_type === 'image/png');
    expect(await server.stop()).toBe(0);
    const volume = join(findContentDir(dataDir), `${String(pngEntry.volume).padStart(6, '0')}.volume`);
    const bytes = readFileSync(volume);
    const at = pngEntry.offset + 16 + 20;
    bytes[at] = (bytes[at] as number) ^ 0xff;
    writeFileSync(volume, bytes);

    server = await startServer({ dataDir, args: ['--port', '0', '--data', dataDir, '--shards', '1'] });
    const corrupted = await call(server, 'GET', '/disk/a.png');
    expect(corrupted.status).toBe(500);
    expect(corrupted.json.message).toMatch(/corrupted/);
    await server.waitForLog((l) => typeof l.msg === 'string' && JSON.stringify(l).includes('content_corrupted'));
    // The rest of the document and the other blob still read.
    expect((await call(server, 'GET', '/disk/a.pdf')).bytes.equals(PDF)).toBe(true);
    expect((await call(server, 'GET', '/disk/a', undefined, { accept: 'application/json' })).json).toMatchObject({ name: 'a' });
  }, 120_000);

  it('concurrent reads of multi-chunk blobs each come back byte-exact (pooled read buffers are never shared early)', async () => {
    const blobs = Array.from({ length: 6 }, (_, n) => Buffer.from(Uint8Array.from({ length: 1_500_000 + n * 1000 }, (_, i) => (i * 13 + n * 7) & 0xff)));
    for (let n = 0; n < blobs.length; n++) await store(server, 'PUT', `/disk/multi${n}`, 'application/octet-stream', blobs[n] as Buffer);
    for (let round = 0; round < 3; round++) {
      const replies = await Promise.all(blobs.map((_, n) => call(server, 'GET', `/disk/multi${n}`)));
      replies.forEach((reply, n) => expect(reply.bytes.equals(blobs[n] as Buffer)).toBe(true));
    }
  });

  it('limits content bodies apart from JSON bodies: 413 on the Content-Length, before the body is read', async () => {
    // 200 MiB announced, nothing sent: the default content limit (100 MiB) answers at once.
    const head = await new Promise<string>((resolve, reject) => {
      const socket = connect(server.port, '127.0.0.1', () => {
        socket.write(`PUT /disk/huge HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: ${200 * 1024 * 1024}\r\n\r\n`);
      });
      let text = '';
      socket.on('data', (d: Buffer) => {
        text += d.toString('latin1');
        if (text.includes('\r\n\r\n')) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on('error', reject);
    });
    expect(head.startsWith('HTTP/1.1 413')).toBe(true);
    expect((await call(server, 'GET', '/disk/huge')).status).toBe(404);
  });
});

function humanSize(bytes: number): string {
  return bytes < 1024 ? `${bytes}B` : `${Math.round(bytes / 102.4) / 10}KiB`;
}

/** The one shard's content directory under the data directory. */
function findContentDir(root: string): string {
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop() as string;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const path = join(dir, entry.name);
      if (entry.name === 'content') return path;
      stack.push(path);
    }
  }
  throw new Error(`no content directory under ${root}`);
}
