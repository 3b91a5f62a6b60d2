/**
 * `POST /.snapshots/` (docs/snapshots.md): a point-in-time copy of every
 * index, streamed to `tessera snapshot`, which writes it to a directory with
 * a checksum per file.
 *
 * 1. A view is opened on the primary of every shard at once (`shard.snapshot`:
 *    one LevelDB snapshot per shard copy, so each shard is taken at one
 *    instant, holding every write acknowledged before the request came and
 *    no half of any write). Any failure releases the views opened and answers
 *    an error status before a byte is sent.
 * 2. The cluster state is read *after* the views are open (from the store
 *    itself, not a watch that may lag): a schema only grows, and a write's
 *    fields are in it, or reserved in `growthReserved` (which the state keeps
 *    and a restored server folds at its start), before the write reaches its
 *    shard, so the state read then describes every field the views hold.
 *    Indexes created after step 1 are not in the snapshot; one deleted or
 *    re-created meanwhile fails it (409 `snapshot_conflict`: try again).
 * 3. The answer is a MessagePack sequence: a header (format, the cluster
 *    state, the shards with the seq and document count of each view), then
 *    each shard's documents in ID order, a frame per page — the pages a
 *    replica's full copy reads (`shard.scan` with origins: versions, origins,
 *    the blobs of stored content) — and a frame closing the shard, and last
 *    `{end: true}`, so a cut stream is never mistaken for a whole one. Pages
 *    are read while the previous one is written and the HTTP server pulls the
 *    next only once the socket has drained. Each view is released once read;
 *    all are released if the client goes away.
 */
import { msgpackSerializer } from '@tessera/http';
import type { ShardRef, SnapshotReply } from '@tessera/rpc';
import type { DocumentId } from '../documents/ids.js';
import { apiErrors } from '../errors.js';
import type { IndexRegistry } from '../indexes/registry.js';
import type { ClusterState, IndexMeta } from '../state/cluster-state.js';
import type { Reply } from '../response/respond.js';
import { prefetched } from './dump.js';

/** Documents per `shard.scan` page of a snapshot (the shard also ends a page at 4 MiB). */
export const SNAPSHOT_PAGE_DOCUMENTS = 1000;
export const SNAPSHOT_FORMAT = 'tessera-snapshot';
export const SNAPSHOT_FORMAT_VERSION = 1;
/** The answer's type: a MessagePack sequence of this format's frames, not one MessagePack value. */
export const SNAPSHOT_MEDIA_TYPE = 'application/vnd.tessera.snapshot';

/** One shard of a snapshot, as the header lists it. */
export interface SnapshotShard {
  index: string;
  uuid: string;
  shard: number;
  /** The shard's primary term when the snapshot was taken. */
  term: number;
  /** The seq of the last write the shard's view holds. */
  seq: number;
  documents: number;
}

/** The first frame of a snapshot stream. */
export interface SnapshotHeader {
  format: typeof SNAPSHOT_FORMAT;
  version: typeof SNAPSHOT_FORMAT_VERSION;
  createdAt: string;
  /** The cluster state of the snapshot: its indexes, templates, aliases, named scripts and API keys (digests); no nodes. */
  state: Omit<ClusterState, 'nodes'>;
  shards: SnapshotShard[];
}

interface OpenView extends SnapshotShard {
  node: string;
  snapshot: string;
}

export class SnapshotHandler {
  constructor(
    private readonly registry: IndexRegistry,
    /**
     * Bring the cluster state up to the store's (etcd's, on a coordinator
     * that follows another: its watch may lag). Before the views, so every
     * index acknowledged is in the snapshot; after them, so the schemas read
     * cover every field the views hold.
     */
    private readonly refreshState: () => Promise<unknown>,
  ) {}

  async take(): Promise<Reply> {
    await this.refreshState();
    const views = await this.openViews(this.registry.list());
    let header: SnapshotHeader;
    try {
      await this.refreshState();
      header = this.header(views);
    } catch (err) {
      await this.release(views);
      throw err;
    }
    return {
      status: 200,
      headers: { 'Content-Type': SNAPSHOT_MEDIA_TYPE },
      stream: this.frames(header, views),
    };
  }

  /** A view on the primary of every shard of `indexes`, opened together. */
  private async openViews(indexes: readonly IndexMeta[]): Promise<OpenView[]> {
    const wanted = indexes.flatMap((meta) => meta.allocation.map((copies, i) => ({ meta, shard: i + 1, node: copies[0] })));
    const opened = await Promise.allSettled(wanted.map(async ({ meta, shard, node }): Promise<OpenView> => {
      const reply: SnapshotReply = await this.registry.client(meta.path, node, shard).call('shard.snapshot', { index: meta.path, shard });
      return {
        index: meta.path, uuid: meta.uuid, shard, term: this.registry.placement(meta, shard).term, seq: reply.seq, documents: reply.documents,
        node: node as string, snapshot: reply.snapshot,
      };
    }));
    const views = opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    const failed = opened.find((o) => o.status === 'rejected');
    if (failed !== undefined) {
      await this.release(views);
      throw failed.reason;
    }
    return views;
  }

  /** The header, from the cluster state as it is once the views are open (see the file comment). */
  private header(views: readonly OpenView[]): SnapshotHeader {
    const { nodes: _nodes, indexes: allIndexes, ...rest } = this.registry.snapshot();
    const indexes: Record<string, IndexMeta> = {};
    for (const view of views) {
      const meta = allIndexes[view.index];
      if (meta?.uuid !== view.uuid) throw apiErrors.snapshotConflict(view.index);
      indexes[view.index] = meta;
    }
    return {
      format: SNAPSHOT_FORMAT,
      version: SNAPSHOT_FORMAT_VERSION,
      createdAt: new Date().toISOString(),
      state: { ...rest, indexes },
      shards: views.map(({ index, uuid, shard, term, seq, documents }) => ({ index, uuid, shard, term, seq, documents })),
    };
  }

  private async *frames(header: SnapshotHeader, views: readonly OpenView[]): AsyncGenerator<Buffer> {
    const open = new Set(views);
    try {
      yield encode(header);
      for (const [position, view] of views.entries()) {
        let count = 0;
        for await (const documents of prefetched(this.pages(view))) {
          count += documents.length;
          yield encode({ shard: position, documents });
        }
        if (count !== view.documents) {
          throw new Error(`shard ${view.shard} of ${view.index}: the view held ${view.documents} documents but ${count} were read`);
        }
        open.delete(view);
        await this.release([view]);
        yield encode({ shard: position, done: true, documents: count });
      }
      yield encode({ end: true });
    } finally {
      await this.release([...open]);
    }
  }

  /** One view's documents, a page per `shard.scan`. */
  private async *pages(view: OpenView): AsyncGenerator<unknown[]> {
    const ref: ShardRef = { index: view.index, shard: view.shard };
    let after: DocumentId | undefined;
    for (;;) {
      const client = this.registry.client(view.index, view.node, view.shard);
      const page = await client.call('shard.scan', {
        ...ref, limit: SNAPSHOT_PAGE_DOCUMENTS, origins: true, snapshot: view.snapshot, ...(after === undefined ? {} : { after }),
      });
      if (page.documents.length > 0) yield page.documents;
      const last = page.documents[page.documents.length - 1];
      if (page.done || last === undefined) return;
      after = last.id;
    }
  }

  /** Close views (errors ignored: a view left open closes itself on its node after a while). */
  private async release(views: readonly OpenView[]): Promise<void> {
    await Promise.all(views.map(async (view) => {
      try {
        await this.registry.client(view.index, view.node, view.shard).call('shard.release', { index: view.index, shard: view.shard, snapshot: view.snapshot });
      } catch {
        // Closed by its idle timer.
      }
    }));
  }
}

function encode(frame: unknown): Buffer {
  return msgpackSerializer.encode(frame, 0) as Buffer;
}
