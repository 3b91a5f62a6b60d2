/**
 * FIFO of what waits to be written to a socket: encoded frames, or calls
 * (kept as calls so that an unsent call can move to the next connection while
 * replies meant for the old one are dropped). An array with a moving head,
 * compacted when the head passes half the array, so taking from the front is
 * O(1) amortised instead of Array#shift's O(n).
 */
export class Outbox<T> {
  private items: Array<T | undefined> = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head === this.items.length) {
      this.items.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Empties the queue, returning what it held in order. */
  drain(): T[] {
    const rest = this.items.slice(this.head) as T[];
    this.items = [];
    this.head = 0;
    return rest;
  }
}
