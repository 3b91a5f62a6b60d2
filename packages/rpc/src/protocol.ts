/**
 * The calls a coordinator makes to a shard node, and their shapes. Plain data
 * only (msgpack-able), so the same calls cross the in-process and the
 * WebSocket transport. A shard copy is named by its index path and 1-based
 * shard number.
 */
import type {
  ContentLink, DocumentBody, DocumentId, DocumentLengths, ReplicatedChange, ReplicatedContent, ShardStats, WriteRequest, WriteResult,
} from '@tessera/documents';

export type {
  ContentLink, ContentWrite, DocumentBody, DocumentId, DocumentLengths, ReplicatedChange, ReplicatedContent, ShardStats, WriteOp, WriteRequest,
  WriteResult, WriteScript,
} from '@tessera/documents';
import type { AggregationRequest, AggregationsPartial, HighlightRequest, Query, SearchAfter, SortKey } from '@tessera/search-model';

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
  /** Absent when `bodyJson` stands for it (a document the node's cache keeps as text, or GetCall.bodiesAsJson): `bodyOf` gives it either way. */
  body?: DocumentBody;
  /** Stored content entries in order of last storing (the last is the default), when the document has any. */
  content?: ContentLink[];
  /** `body` as compact JSON (the stored source, encoded once per cached version), when the node has it. */
  bodyJson?: string;
}

export interface GetCall extends ShardRef {
  id: DocumentId;
  /**
   * The caller is across a wire (another process or thread): a body its
   * compact JSON carries exactly comes as `bodyJson` alone, not twice.
   */
  bodiesAsJson?: boolean;
}

/** A reply's body: the object when it came, else parsed from its JSON (a reply asked `bodiesAsJson`). */
export function bodyOf(reply: { body?: DocumentBody; bodyJson?: string }): DocumentBody {
  if (reply.body !== undefined) return reply.body;
  if (reply.bodyJson === undefined) throw new TypeError('a document reply with neither body nor bodyJson');
  return JSON.parse(reply.bodyJson) as DocumentBody;
}

/**
 * The index schema of a call that indexes or searches with it, named by its
 * identity (`schemaId`, the same for the same schema content) so that it
 * need not travel with every call: the node holds the schema last sent in
 * full for each shard copy, and a call whose `schemaId` is not the one held
 * — and that leaves `schema` out — is refused with 409 `schema_unknown`
 * before anything runs; the caller sends it again with `schema`
 * (coordinator `schema-references.ts`). Without `schemaId` the call
 * carries its schema as it is, or none.
 */
export interface SchemaReference {
  /** Identity of `schema`: with `schema`, the node holds it under this identity; without, the node uses the schema it holds under it. */
  schemaId?: string;
}

/** `doc.write`: a write on the shard's primary copy (a bulk load's writes go by `doc.writeMany`). */
export interface WriteCall extends ShardRef, SchemaReference, Omit<WriteRequest, 'bulk'> {
  /**
   * Sent straight to the primary, which relays the write to the shard's
   * replicas itself: the node runs it only while it holds a placement that
   * takes direct writes in the call's term (`shard.placement`), and refuses
   * it otherwise (503 `primary_not_placed`) before anything ran.
   */
  direct?: boolean;
}

/** A replica a primary relays its direct writes to: its name and the address of its relay listener. */
export interface RelayTarget {
  node: string;
  url: string;
}

/**
 * `shard.placement`: the elected coordinator tells a shard's primary what
 * the cluster state at `revision` says of the shard — its term, whether the
 * primary takes `direct` writes (from any coordinator, relaying each itself
 * to `replicas`, the in-sync replicas, before it answers), and those
 * replicas. The node keeps the placement of the highest revision (a push
 * delayed on the wire never replaces a newer one). The answer to a push
 * that ends `direct` comes once no direct write runs on the copy (its
 * relays included): every write after it goes through the elected
 * coordinator, which relays it.
 */
export interface PlacementCall extends ShardRef {
  term: number;
  revision: number;
  direct: boolean;
  replicas: RelayTarget[];
}

/** The revision of the placement the node holds after the push: the push's own, or a newer one it kept. */
export interface PlacementReply {
  revision: number;
}

/**
 * A write's reply: the engine's result of it. A direct write whose relay
 * some replicas failed names them (`relayFailed`): the write is not
 * acknowledged until they left the in-sync set, and the primary takes no
 * more direct writes until it is placed again.
 */
export type WriteReply = WriteResult & { relayFailed?: string[] };

/** Many writes to one shard in one call (RESTORE): one LevelDB batch when they fit. */
export interface WriteManyCall extends ShardRef, SchemaReference {
  writes: BatchWrite[];
  commit?: boolean;
  schema?: Record<string, unknown>;
  term?: number;
}

/**
 * One write of a `doc.writeMany`: the fields a batch carries (no script; a
 * RESTORE item's content is one more `doc.write` once its body is stored).
 */
export type BatchWrite = Pick<WriteRequest, 'op' | 'id' | 'body' | 'indexed' | 'patch' | 'expectedVersions' | 'upsert'>;

/** `doc.info`: a document's INFO (API.md §5.8): its place and content entries, and the terms and values it is indexed with. */
export interface DocumentInfoReply {
  id: DocumentId;
  docid: number;
  version: number;
  content?: ContentLink[];
  /** Term names split on `.` into nested keys, leaves `{wdf, pos?}`. */
  terms: Record<string, unknown>;
  /** Value slot (decimal) → value. */
  values: Record<string, unknown>;
}

/**
 * `doc.content`: bytes [from, from + length) of a stored blob, named by its
 * entry (blobs are never rewritten, so the entry read with the document stays
 * valid after the document changes). `verify` checks the whole blob's
 * checksum first: set on a streamed answer's first read.
 */
export interface ContentReadCall extends ShardRef, ContentLink {
  from: number;
  length: number;
  verify?: boolean;
}

/** `doc.replicate`: changes for a replica copy, under the shard's primary term. */
export interface ReplicateCall extends ShardRef, SchemaReference {
  term: number;
  changes: ReplicatedChange[];
  /** Durable (sync) before the reply, as `?commit` asks of every in-sync copy. */
  commit?: boolean;
  schema?: Record<string, unknown>;
}

/**
 * A copy's replication position: the highest primary term it has seen, and
 * its checkpoint (every change the primary of `checkpointTerm` numbered up
 * to `checkpoint` is applied), its own last seq, and how far back its
 * operation log reaches.
 */
export interface ReplicationPositionReply {
  term: number;
  checkpointTerm: number;
  checkpoint: number;
  seq: number;
  oplogFirstSeq: number;
}

export interface ReplicateReply {
  applied: number;
  discarded: number;
  position: ReplicationPositionReply;
}

/** `shard.changes`: a primary's operation-log entries after `afterSeq` (410 `oplog_trimmed` when gone: a full copy is needed). */
export interface ChangesCall extends ShardRef {
  afterSeq: number;
  limit: number;
}

export interface ChangesReply {
  changes: ReplicatedChange[];
  /** The copy's last seq when the page was read. */
  seq: number;
}

/** `shard.follow`: the coordinator tells a copy it holds every change of `term` up to `checkpoint` (promotion, end of a full copy). */
export interface FollowCall extends ShardRef {
  term: number;
  checkpoint: number;
}

/** One answer per write of a WriteManyCall, in order: the reply, or the error it failed with. */
export type WriteManyReply = Array<WriteReply | { error: { code: string; status: number; message: string } }>;

/**
 * A search on one shard copy: the query, sort and `_aggs` as the
 * coordinator parsed and validated them once (@tessera/search-model), which
 * the shard binds to its schema and statistics. It returns its best `k` hits
 * (k = offset + limit) with their documents, the sort values the coordinator
 * merges on, and the exact number of matches.
 */
export interface SearchCall extends ShardRef, SchemaReference {
  /** Absent: every document. */
  query?: Query;
  /** Absent: by relevance. */
  sort?: SortKey[];
  k: number;
  countOnly?: boolean;
  /** The index schema (cluster state), to resolve fields; left out on the wire when `schemaId` names the one the node holds. */
  schema: Record<string, unknown>;
  /** Parsed `_aggs` (API.md §10), bound to the schema on the shard. */
  aggs?: AggregationRequest[];
  /** A `_search_after` cursor: only hits ordered after it (its values follow `sort`). */
  after?: SearchAfter;
  /** Parsed `_highlight`: fragments of these fields for each hit. */
  highlight?: HighlightRequest;
  /** As GetCall.bodiesAsJson, for every hit: the caller parses the few it needs (`bodyOf`). */
  bodiesAsJson?: boolean;
  /** False: hits without `body` and `bodyJson` (the page shows only `_id` and `_version`); the shard reads no document. */
  documents?: boolean;
}

export interface SearchHitReply {
  id: DocumentId;
  docid: number;
  version: number;
  /** Absent when `bodyJson` stands for it (as DocumentReply.body): `bodyOf` gives it either way. Both are absent when no `documents` were asked (SearchCall.documents). */
  body?: DocumentBody;
  /** `body` as compact JSON (as DocumentReply.bodyJson), when the node has it. */
  bodyJson?: string;
  score: number;
  sortValues?: Array<number | string | null>;
  /** Fragments by field path, when `highlight` was asked. */
  highlight?: Record<string, string[]>;
}

export interface SearchReply {
  total: number;
  hits: SearchHitReply[];
  /** Direction of each sort key, in order (empty: by relevance). */
  sortOrders: Array<'asc' | 'desc'>;
  /** With `after`: the matches ordered before the cursor. */
  before?: number;
  /** The shard's partial aggregations, when `aggs` was asked (merged by search-model's `renderAggregations`). */
  aggregations?: AggregationsPartial;
}

/**
 * One page of a shard's documents in ID order (DUMP): those after `after`
 * (exclusive; from the first when absent), at most `limit`; `done` when
 * nothing follows. The caller pages with the last ID it got.
 */
export interface ScanCall extends ShardRef {
  after?: DocumentId;
  limit: number;
  /** Also give each document's origin and its content with the blobs (a full copy for a replica). */
  origins?: boolean;
  /** Also give each document's content with the blobs (DUMP). */
  content?: boolean;
  /** Read every page from this point-in-time view (`shard.snapshot`) instead of the copy as it is now. */
  snapshot?: string;
}

/**
 * A point-in-time view of a shard copy, opened by `shard.snapshot` and paged
 * with `shard.scan` (`snapshot`): its ID, the seq of the last write it holds
 * and its live documents. `shard.release` closes it; a view left unread
 * closes itself after a while.
 */
export interface SnapshotReply {
  snapshot: string;
  seq: number;
  documents: number;
}

export interface ScanReply {
  documents: Array<{
    id: DocumentId; version: number; body: DocumentBody; indexed?: DocumentBody; originTerm?: number; originSeq?: number; content?: ReplicatedContent[];
  }>;
  done: boolean;
}

export interface ShardStatsReply extends ShardStats {
  /** The copy's replication position (nodes that replicate always give it). */
  replication?: ReplicationPositionReply;
  /** Terms per live document, when asked for (`lengths: true`: a walk of the norms). */
  lengths?: DocumentLengths;
}

/** Method name → [params, result]. */
export interface ShardCalls {
  'shard.open': [ShardRef, ShardStatsReply];
  'shard.drop': [ShardRef, null];
  'shard.stats': [ShardRef & { lengths?: boolean }, ShardStatsReply];
  'shard.commit': [ShardRef, null];
  'doc.get': [GetCall, DocumentReply | null];
  'doc.write': [WriteCall, WriteReply];
  'doc.writeMany': [WriteManyCall, WriteManyReply];
  'doc.replicate': [ReplicateCall, ReplicateReply];
  'shard.changes': [ChangesCall, ChangesReply];
  'shard.follow': [FollowCall, ReplicationPositionReply];
  'shard.placement': [PlacementCall, PlacementReply];
  'shard.search': [SearchCall, SearchReply];
  'shard.scan': [ScanCall, ScanReply];
  'shard.snapshot': [ShardRef, SnapshotReply];
  'shard.release': [ShardRef & { snapshot: string }, null];
  'doc.content': [ContentReadCall, Uint8Array];
  'doc.info': [ShardRef & SchemaReference & { id: DocumentId; schema?: Record<string, unknown> }, DocumentInfoReply | null];
  'node.info': [Record<string, never>, NodeInfoReply];
  'node.stats': [Record<string, never>, NodeStatsReply];
}

export interface NodeInfoReply {
  name: string;
  /** `checkpoint`: where a replica copy stands in its primary's numbering (its replication position). */
  shards: Array<ShardRef & { seq: number; documents: number; checkpoint?: number }>;
}

/**
 * A latency histogram as plain numbers: `counts[i]` observations at most
 * `bounds[i]` seconds (and above the previous bound), the last entry above
 * every bound; `count` and `sum` since the shard copy was opened.
 */
export interface LatencyHistogramReply {
  bounds: readonly number[];
  counts: number[];
  count: number;
  sum: number;
}

/** What `/:metrics` gathers from a node at scrape time: figures of each open shard copy. */
export interface NodeStatsReply {
  name: string;
  /** The node's Lua script runner (absent until it has started): compiled-chunk cache and runs. */
  scripts?: { cacheHits: number; cacheMisses: number; compiles: number; runs: number; failures: number };
  /** What the LevelDB databases of the node's copies hold in memory (memtables, block caches) and the memtable flushes its bound asked for. */
  store?: { bytes: number; databases: number; flushes: number; stalls: number };
  shards: Array<ShardRef & {
    documents: number;
    seq: number;
    /** Bytes of the copy's directory on disk (measured at most every few seconds). */
    bytes: number;
    /** LevelDB batch writes, buffered and synced (`commit`). */
    commitSeconds: { buffered: LatencyHistogramReply; synced: LatencyHistogramReply };
    /** The copy's search index: segments, write buffer bytes, its flushes and merges (failures included) and the writes its replay bound held back, since it was opened. */
    search?: {
      segments: number; segmentBytes: number; writeBufferBytes: number; flushes: number; flushFailures: number; merges: number; mergeFailures: number;
      writeHolds: number;
    };
    /** Present while the copy's flushes keep failing: its write buffers cannot become segments. */
    flushFailure?: { message: string; failures: number; sinceMs: number };
  }>;
}

export type ShardCallName = keyof ShardCalls;

/**
 * The shard node's side of ShardCalls: one handler per method, its params
 * and result checked by the compiler against the map the coordinator calls
 * with (node `ShardNode`).
 */
export type ShardCallHandlers = { [M in ShardCallName]: (params: ShardCalls[M][0]) => Promise<ShardCalls[M][1]> };

/**
 * What a coordinator calls on a node process: its shard calls, and the
 * refusal at admission (`node.refused`, answered by the process itself —
 * cli `node.ts` — not by its ShardNode).
 */
export interface NodeCalls extends ShardCalls {
  'node.refused': [NodeRefusal, null];
}

/** `node.refused`: the coordinator does not admit the node, and says why. */
export interface NodeRefusal {
  reason: string;
}
