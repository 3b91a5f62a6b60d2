/**
 * One call at a time to something that answers "as of now" (a linearizable
 * read): a caller that arrives while one is in flight shares the next one,
 * which starts after it — so what the caller gets is at least as new as the
 * moment it asked — and a burst of callers costs one call per round trip.
 */
export class SharedRound<T> {
  private current: Promise<T> | undefined;
  private next: Promise<T> | undefined;

  constructor(private readonly run: () => Promise<T>) {}

  /** The answer of a call started at or after this one. */
  join(): Promise<T> {
    if (this.current === undefined) {
      this.current = this.run().finally(() => { this.current = undefined; });
      return this.current;
    }
    this.next ??= this.current.catch(() => undefined).then(() => {
      this.next = undefined;
      return this.join();
    });
    return this.next;
  }
}
