/**
 * A full disk is 507 `storage_full`, whoever met it: LevelDB (an IO error
 * carrying strerror's text, possibly as the cause of a NotOpenError) or the
 * content volumes (Node's ENOSPC/EDQUOT); other storage failures stay 503
 * `storage_unavailable`. The real thing (a data directory on a full tmpfs)
 * is scripts/chaos/scenarios/r11-disk-full.mjs.
 */
import { contentErrors } from './content/volumes.js';
import { engineErrors, isDiskFull } from './errors.js';

const levelIoError = Object.assign(new Error('IO error: /data/r/#1/000003.log: No space left on device'), { code: 'LEVEL_IO_ERROR' });
const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
const edquot = Object.assign(new Error('EDQUOT: disk quota exceeded, write'), { code: 'EDQUOT' });

it('a full disk, from LevelDB or from Node, directly or as a cause, is 507 storage_full naming the cause', () => {
  const notOpen = Object.assign(new Error('Database failed to open', { cause: levelIoError }), { code: 'LEVEL_DATABASE_NOT_OPEN' });
  for (const cause of [levelIoError, enospc, edquot, notOpen]) {
    expect(isDiskFull(cause)).toBe(true);
    expect(engineErrors.storageUnavailable(cause)).toMatchObject({ code: 'storage_full', status: 507, message: expect.stringMatching(/free disk space/) });
    expect(contentErrors.storage(cause)).toMatchObject({ code: 'storage_full', status: 507 });
  }
  expect(engineErrors.storageUnavailable(levelIoError).message).toContain('No space left on device');
});

it('other storage failures stay 503 storage_unavailable', () => {
  const eio = Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });
  for (const cause of [eio, new Error('content volumes are closed'), 'a failed batch reached the disk']) {
    expect(isDiskFull(cause)).toBe(false);
    expect(engineErrors.storageUnavailable(cause)).toMatchObject({ code: 'storage_unavailable', status: 503 });
    expect(contentErrors.storage(cause)).toMatchObject({ code: 'storage_unavailable', status: 503 });
  }
});
