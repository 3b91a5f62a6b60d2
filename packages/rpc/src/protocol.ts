/**
 * The calls a coordinator makes to a shard node, and their shapes. Plain data
 * only (msgpack-able), so the same calls cross the in-process and the
 * WebSocket transport. A shard copy is named by its index path and 1-based
 * shard number.
 */
export type DocumentId = string | number;
export type DocumentBody = Record<string, unknown>;

export interface ShardRef {
  /** Index path, with leading and trailing slash: `/blog/`. */
  index: string;
  /** 1-based shard number. */
  shard: number;
}

export interface DocumentReply {
  id: DocumentId;
  docid: number;
  version: number;
  body: DocumentBody;
}

export interface WriteCall extends ShardRef {
  op: 'index' | 'update' | 'patch' | 'delete';
  id: DocumentId;
  body?: DocumentBody;
  patch?: unknown[];
  expectedVersions?: number[];
  upsert?: boolean;
  commit?: boolean;
}

export interface WriteReply {
  id: DocumentId;
  docid: number;
  version: number;
  seq: number;
  body?: DocumentBody;
  deleted: boolean;
}

export interface ShardStatsReply {
  documents: number;
  lastDocid: number;
  seq: number;
  maxNumericId: number;
}

/** Method name → [params, result]. */
export interface ShardCalls {
  'shard.open': [ShardRef, ShardStatsReply];
  'shard.drop': [ShardRef, null];
  'shard.stats': [ShardRef, ShardStatsReply];
  'shard.commit': [ShardRef, null];
  'doc.get': [ShardRef & { id: DocumentId }, DocumentReply | null];
  'doc.write': [WriteCall, WriteReply];
  'node.info': [Record<string, never>, NodeInfoReply];
}

export interface NodeInfoReply {
  name: string;
  shards: Array<ShardRef & { seq: number; documents: number }>;
}

export type ShardCallName = keyof ShardCalls;
