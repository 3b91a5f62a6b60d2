/**
 * What a process hosting shard copies (`tessera serve`, `tessera node`) is
 * told about them, and the ShardNode it makes of that: one place for both.
 */
import type { ScriptRunnerOptions } from '@tessera/engine';
import type { ShardNodeOptions } from '@tessera/node';
import type { Logger } from 'pino';

export interface ShardHostOptions {
  /** Decoded-document cache of the node, bytes, shared by its shard copies. */
  documentCacheBytesMax: number;
  /** LevelDB write buffer (memtable) of each shard copy's database, bytes. */
  storeWriteBufferBytes: number;
  /** What the LevelDB databases of all the copies may hold in memory together, bytes. */
  storeMemoryBytesMax: number;
  /** A stored-content volume file is rolled over at this size, bytes. */
  contentVolumeBytesMax: number;
  /** A shard's write buffer is flushed into a segment past this many estimated bytes… */
  writeBufferBytesMax: number;
  /** …or this many changes. */
  writeBufferOpsMax: number;
  /** Budgets and cache of the Lua scripts (engine defaults when absent). */
  scripts?: ScriptRunnerOptions;
}

/** The options of the ShardNode named `name`, its copies under `dataDir`, logging as a child of `log`. */
export function shardNodeOptions(host: ShardHostOptions, name: string, dataDir: string, log: Logger): ShardNodeOptions {
  return {
    name,
    dataDir,
    documentCacheBytesMax: host.documentCacheBytesMax,
    storeWriteBufferBytes: host.storeWriteBufferBytes,
    storeMemoryBytesMax: host.storeMemoryBytesMax,
    content: { volumeBytesMax: host.contentVolumeBytesMax },
    index: { writeBufferBytesMax: host.writeBufferBytesMax, writeBufferOpsMax: host.writeBufferOpsMax },
    scripts: host.scripts,
    log: log.child({ component: 'node', node: name }),
  };
}
