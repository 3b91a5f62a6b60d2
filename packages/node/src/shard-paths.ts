/**
 * Where a shard copy lives on disk: `<dataDir>/<index segments…>/#<shard>`.
 * `#` cannot appear in an index name (API.md §1.1), so a shard directory never
 * collides with the directory of a nested index (`/a/` vs `/a/b/`), and the
 * tree stays readable for an operator.
 */
import { join } from 'node:path';

export function shardDirectory(dataDir: string, index: string, shard: number): string {
  const segments = index.split('/').filter((s) => s.length > 0);
  return join(dataDir, ...segments, `#${shard}`);
}
