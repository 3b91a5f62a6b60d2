/**
 * Bytes a shard copy's directory takes on disk, for `tessera_index_bytes`.
 * Walking a directory costs a stat per file, so each result is kept for a
 * few seconds: scrapes every second stay cheap, the figure at most that old.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

export const DIRECTORY_BYTES_TTL_MS = 5_000;

/** Sum of the sizes of the regular files under `dir` (0 when it is missing); files vanishing meanwhile (LevelDB compaction) count 0. */
export async function directoryBytes(dir: string): Promise<number> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  const sizes = await Promise.all(entries.map(async (entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return directoryBytes(path);
    if (!entry.isFile()) return 0;
    try {
      return (await stat(path)).size;
    } catch {
      return 0;
    }
  }));
  return sizes.reduce((sum, n) => sum + n, 0);
}

/** directoryBytes, remembered per directory for `ttlMs`; concurrent askers share one walk. */
export class DirectorySizes {
  private readonly known = new Map<string, { atMs: number; bytes: Promise<number> }>();

  constructor(private readonly ttlMs: number = DIRECTORY_BYTES_TTL_MS) {}

  bytes(dir: string): Promise<number> {
    const now = Date.now();
    const known = this.known.get(dir);
    if (known !== undefined && now - known.atMs < this.ttlMs) return known.bytes;
    const bytes = directoryBytes(dir);
    this.known.set(dir, { atMs: now, bytes });
    return bytes;
  }

  /** Forget a directory (its shard copy was closed or dropped): the map holds only live copies. */
  forget(dir: string): void {
    this.known.delete(dir);
  }
}
