/**
 * The point-in-time views of shard copies this node holds open for a
 * snapshot (`shard.snapshot`, then `shard.scan` with `snapshot`, then
 * `shard.release`; engine `ShardSnapshot`). A view left unread for
 * SNAPSHOT_VIEW_IDLE_MS closes itself, so a coordinator that died mid-snapshot
 * does not keep LevelDB's old versions alive for ever; closing or dropping
 * the copy closes its views.
 */
import { randomUUID } from 'node:crypto';
import type { Shard, ShardSnapshot } from '@tessera/engine';
import type { ShardRef } from '@tessera/rpc';
import { nodeErrors } from './errors.js';

/** How long a view waits for its next page before it closes itself. */
export const SNAPSHOT_VIEW_IDLE_MS = 10 * 60_000;

interface OpenView {
  view: ShardSnapshot;
  /** The copy it reads (`shardKey`): a page asked through another copy is refused. */
  copy: string;
  timer: NodeJS.Timeout;
}

export class SnapshotViews {
  private readonly views = new Map<string, OpenView>();

  constructor(private readonly idleMs: number = SNAPSHOT_VIEW_IDLE_MS) {}

  /** Open a view of `shard` (the copy `copy`); its ID and what it holds. */
  async open(shard: Shard, copy: string): Promise<{ snapshot: string; seq: number; documents: number }> {
    const view = await shard.snapshot();
    const id = randomUUID();
    this.views.set(id, { view, copy, timer: this.expiry(id) });
    return { snapshot: id, seq: view.seq, documents: view.documents };
  }

  /** The open view `id` of the copy `copy`, its idle clock restarted; 410 `snapshot_expired` when there is none. */
  get(where: ShardRef, copy: string, id: string): ShardSnapshot {
    const open = this.views.get(id);
    if (open === undefined || open.copy !== copy) throw nodeErrors.snapshotExpired(where.index, where.shard, id);
    open.timer.refresh();
    return open.view;
  }

  async release(id: string): Promise<void> {
    const open = this.views.get(id);
    if (open === undefined) return;
    this.views.delete(id);
    clearTimeout(open.timer);
    await open.view.close();
  }

  /** Close the views of one copy (it is being dropped), or all of them. */
  async releaseAll(copy?: string): Promise<void> {
    const ids = [...this.views].filter(([, open]) => copy === undefined || open.copy === copy).map(([id]) => id);
    await Promise.all(ids.map((id) => this.release(id)));
  }

  private expiry(id: string): NodeJS.Timeout {
    const timer = setTimeout(() => void this.release(id).catch(() => undefined), this.idleMs);
    timer.unref();
    return timer;
  }
}
