import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { relinkContent } from '../documents/write.js';
import { ContentVolumes, piecesAfter, RELEASE_BUFFER } from './volumes.js';

let dir: string;
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'tessera-volumes-')); });
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const bytes = (seed: number, size: number): Buffer => Buffer.from(Uint8Array.from({ length: size }, (_, i) => (i * 7 + seed) & 0xff));

describe('ContentVolumes', () => {
  it('appends frames and reads each blob back whole or by range, checked', async () => {
    const volumes = await ContentVolumes.open(dir);
    const a = await volumes.append(bytes(1, 1000), false);
    const b = await volumes.append(bytes(2, 3000), true);
    expect(a).toMatchObject({ volume: 1, offset: 0, size: 1000 });
    expect(b).toMatchObject({ volume: 1, offset: 1016, size: 3000 });
    expect((await volumes.read(a)).equals(bytes(1, 1000))).toBe(true);
    expect((await volumes.readRange(b, 100, 50, true)).equals(bytes(2, 3000).subarray(100, 150))).toBe(true);
    await expect(volumes.readRange(b, 2990, 20, false)).rejects.toMatchObject({ code: 'invalid_content_location' });
    await volumes.close();
  });

  it('a blob given in pieces is stored as the same frame as given whole: same size, checksum and bytes on disk', async () => {
    const volumes = await ContentVolumes.open(dir);
    const blob = bytes(5, 70_000);
    const whole = await volumes.append(blob, false);
    const pieces = await volumes.append([blob.subarray(0, 1), blob.subarray(1, 1), blob.subarray(1, 65_536), blob.subarray(65_536)], false);
    expect(pieces).toMatchObject({ size: whole.size, crc: whole.crc, offset: whole.offset + 16 + whole.size });
    expect((await volumes.read(pieces)).equals(blob)).toBe(true);
    const file = readFileSync(join(dir, '000001.volume'));
    expect(file.subarray(pieces.offset).equals(file.subarray(0, pieces.offset))).toBe(true);
    await volumes.close();
  });

  it('after a short write, the rest of a frame is what follows the bytes written, in any piece', () => {
    const frame = [Buffer.from('head'), Buffer.from(''), Buffer.from('abc'), Buffer.from('defgh')];
    const joined = Buffer.concat(frame).toString();
    for (let written = 0; written <= joined.length; written++) {
      expect(Buffer.concat(piecesAfter(frame, written)).toString()).toBe(joined.slice(written));
    }
  });

  it('rolls over to a new volume at the size limit, and continues the last volume after a reopen', async () => {
    let volumes = await ContentVolumes.open(dir, { volumeBytesMax: 2048 });
    const first = await volumes.append(bytes(1, 1500), false);
    const second = await volumes.append(bytes(2, 1500), false);
    expect([first.volume, second.volume]).toEqual([1, 2]);
    await volumes.close();
    volumes = await ContentVolumes.open(dir, { volumeBytesMax: 2048 });
    const third = await volumes.append(bytes(3, 100), false);
    expect(third).toMatchObject({ volume: 2, offset: 1516 });
    for (const [where, seed, size] of [[first, 1, 1500], [second, 2, 1500], [third, 3, 100]] as const) {
      expect((await volumes.read(where)).equals(bytes(seed, size))).toBe(true);
    }
    expect(readdirSync(dir).sort()).toEqual(['000001.volume', '000002.volume']);
    await volumes.close();
  });

  it('refuses a corrupted or torn blob and a link that points at no frame, and serves the others', async () => {
    let volumes = await ContentVolumes.open(dir);
    const good = await volumes.append(bytes(1, 500), false);
    const bad = await volumes.append(bytes(2, 500), false);
    await volumes.close();
    const file = join(dir, '000001.volume');
    const raw = readFileSync(file);
    raw[bad.offset + 16 + 10] ^= 0x01;
    writeFileSync(file, raw);
    // A frame cut short by a crash while it was appended.
    appendFileSync(file, Buffer.from([0x54, 0x53, 0x42, 0x31, 0, 0, 0, 0, 0, 0, 0x10, 0]));
    volumes = await ContentVolumes.open(dir);
    await expect(volumes.read(bad)).rejects.toMatchObject({ code: 'content_corrupted', status: 500 });
    await expect(volumes.readRange(bad, 0, 10, true)).rejects.toMatchObject({ code: 'content_corrupted' });
    await expect(volumes.read({ ...good, offset: 3 })).rejects.toMatchObject({ code: 'content_corrupted' });
    await expect(volumes.read({ ...good, size: 499 })).rejects.toMatchObject({ code: 'content_corrupted' });
    await expect(volumes.read({ ...good, volume: 9 })).rejects.toMatchObject({ code: 'content_corrupted' });
    expect((await volumes.read(good)).equals(bytes(1, 500))).toBe(true);
    // Appends go after the torn frame; it is never linked.
    const after = await volumes.append(bytes(3, 10), false);
    expect(after.offset).toBe(bad.offset + 516 + 12);
    expect((await volumes.read(after)).equals(bytes(3, 10))).toBe(true);
    await volumes.close();
  });
});

describe('pooled reads', () => {
  it('streamed reads hand out pool frames that come back once released, once; plain reads are not pooled', async () => {
    const volumes = await ContentVolumes.open(dir);
    const a = await volumes.append(bytes(1, 3000), false);
    const b = await volumes.append(bytes(2, 3000), false);
    const first = await volumes.readRange(a, 0, 3000, true);
    const release = (first as unknown as Record<symbol, () => void>)[RELEASE_BUFFER];
    expect(typeof release).toBe('function');
    expect(first.equals(bytes(1, 3000))).toBe(true);
    // Not released: the next read gets another frame, and the first chunk stays intact.
    const second = await volumes.readRange(b, 0, 3000, true);
    expect(second.buffer).not.toBe(first.buffer);
    expect(first.equals(bytes(1, 3000))).toBe(true);
    release();
    release();
    const third = await volumes.readRange(b, 100, 200, false);
    expect(third.buffer).toBe(first.buffer);
    expect(third.equals(bytes(2, 3000).subarray(100, 300))).toBe(true);
    const fourth = await volumes.readRange(a, 0, 10, false);
    expect(fourth.buffer).not.toBe(first.buffer);
    expect((await volumes.read(a) as unknown as Record<symbol, unknown>)[RELEASE_BUFFER]).toBeUndefined();
    await volumes.close();
  });
});

describe('relinkContent', () => {
  const link = (type: string, offset: number) => ({ type, volume: 1, offset, size: 1, crc: 0 });
  it('moves a re-stored type to the end, removes an unlinked one, matches types without parameters or case', () => {
    const current = [link('image/png', 0), link('application/pdf', 10)];
    expect(relinkContent(current, 'Image/PNG; x=1', link('image/png', 20)).map((l) => [l.type, l.offset]))
      .toEqual([['application/pdf', 10], ['image/png', 20]]);
    expect(relinkContent(current, 'application/pdf', undefined).map((l) => l.type)).toEqual(['image/png']);
    expect(relinkContent(undefined, 'text/plain', undefined)).toEqual([]);
  });
});
