/**
 * One etcd watch of a key prefix, for the etcd state store: its news is
 * applied one item at a time, in order (applying a delete may itself call
 * etcd, and nothing newer may overtake it). After the watch dropped and came
 * back, the prefix is read again (the client resumes where it stopped, but a
 * second drop during that replay would lose events); when etcd cancels the
 * watch (its start revision was compacted away) the prefix is read again and
 * watched from there.
 */
import type { Etcd3, IWatchResponse, Watcher } from 'etcd3';
import { stateErrors } from './errors.js';

/** Reconnection backoff of the watch and of the gRPC channel: a coordinator is back in the game within a second of etcd. */
export const RECONNECT_BACKOFF_MS_MAX = 1000;

export interface PrefixWatchHandlers {
  /** Range-reads the prefix and applies it as the truth; resolves with the revision read. */
  readAll(): Promise<number>;
  /** Applies one response's events. */
  apply(response: IWatchResponse): Promise<void>;
  /** An item could not be applied (a value that is not ours): the cache is no longer etcd's state. */
  failed(reason: string): void;
}

type InboxItem = { kind: 'events'; response: IWatchResponse } | { kind: 'resync' } | { kind: 'rewatch' };

export class PrefixWatch {
  private watcher: Watcher | undefined;
  /** Why the watch is down, while it is. */
  private down: string | undefined;
  /** The watch dropped since it last connected: re-read once it is back. */
  private lost = false;
  private readonly inbox: InboxItem[] = [];
  private pumping: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly client: Etcd3,
    private readonly prefix: string,
    private readonly callTimeoutMs: number,
    private readonly handlers: PrefixWatchHandlers,
  ) {}

  /** Why the watch is not connected, or undefined while it is. */
  get downReason(): string | undefined {
    return this.down;
  }

  /** Watches from `fromRevision`; rejects (503) if etcd does not confirm within the call timeout. */
  async start(fromRevision: number): Promise<void> {
    const watcher = this.client.watch().prefix(this.prefix).withPreviousKV().startRevision(String(fromRevision)).watcher();
    this.watcher = watcher;
    watcher.on('data', (response) => this.enqueue({ kind: 'events', response }));
    watcher.on('disconnected', (err) => {
      this.down = err.message;
      this.lost = true;
    });
    watcher.on('connected', () => {
      this.down = undefined;
      if (this.lost) this.enqueue({ kind: 'resync' });
      this.lost = false;
    });
    watcher.on('error', (err) => {
      if (this.watcher !== watcher) return;
      this.down = err.message;
      this.enqueue({ kind: 'rewatch' });
    });
    const connected = new Promise<void>((resolve) => watcher.once('connected', () => resolve()));
    try {
      await withTimeout(connected, this.callTimeoutMs);
    } catch (err) {
      throw stateErrors.unavailable('watch the cluster state', err instanceof Error ? err.message : String(err), err);
    }
  }

  /** Drops what is queued, cancels the watch (bounded: a store cut off from etcd still closes) and waits for the item being applied. */
  async close(): Promise<void> {
    this.closed = true;
    this.inbox.length = 0;
    const watcher = this.watcher;
    this.watcher = undefined;
    if (watcher !== undefined) await withTimeout(watcher.cancel(), this.callTimeoutMs).catch(() => undefined);
    await this.pumping;
  }

  private enqueue(item: InboxItem): void {
    if (this.closed) return;
    this.inbox.push(item);
    this.pumping ??= this.pump().finally(() => {
      this.pumping = undefined;
    });
  }

  private async pump(): Promise<void> {
    for (let item = this.inbox.shift(); item !== undefined && !this.closed; item = this.inbox.shift()) {
      try {
        if (item.kind === 'events') await this.handlers.apply(item.response);
        else await this.rereadUntilDone(item.kind === 'rewatch');
      } catch (err) {
        this.handlers.failed(`cannot apply a change from etcd: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  private async rereadUntilDone(watchAgain: boolean): Promise<void> {
    while (!this.closed) {
      try {
        if (watchAgain) {
          // etcd cancelled it already: asking to cancel again would wait for an answer that never comes.
          this.watcher?.removeAllListeners();
          this.watcher = undefined;
          await this.start((await this.handlers.readAll()) + 1);
        } else {
          await this.handlers.readAll();
        }
        return;
      } catch {
        if (this.closed) return;
        await delay(RECONNECT_BACKOFF_MS_MAX);
      }
    }
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** `promise`, or a rejection after `ms` (the promise's own later rejection is swallowed). */
export function withTimeout<R>(promise: Promise<R>, ms: number): Promise<R> {
  promise.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from etcd within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
