/**
 * Where a server process's log lines go: a file descriptor (standard
 * output), written so that logging never blocks serving or shutdown. A
 * destination that fails loses lines, counted in `dropped`
 * (`tessera_log_lines_dropped_total`), never the process.
 *
 * Why not pino's default (sonic-boom): its `flushSync`, which pino runs on
 * `process.exit`, retries every write error but EAGAIN forever, 100 ms apart,
 * on the main thread. When the reader of standard output closes its end as
 * it sends SIGTERM (`spawnSync` with a `timeout` does), the "stopped" line
 * meets EPIPE at exit and the process never ends (write = -1 EPIPE, sleep,
 * again). And in sync mode a reader that stops reading blocks the event loop.
 *
 * Here lines wait in a queue bounded by `queueBytesMax` (past it a line is
 * dropped) and are written by one `fs.write` at a time, off the main thread,
 * at most `FLUSH_DELAY_MS` after they were queued (at once past
 * `FLUSH_BYTES`): an access log line per request, written as it came, cost a
 * busy coordinator a thread-pool hand-off per line (7 % of its main thread
 * under PUT load, scripts/bench/cluster.mjs --profile); now it costs one per
 * interval.
 * EAGAIN is retried from a timer; EPIPE and the other errors of a reader
 * that is gone close the destination for good (every later line is dropped);
 * any other error (ENOSPC…) drops the lines of that write and goes on. At
 * exit, `drain(timeoutMs)` waits a bounded time for the queue to empty.
 */
import { write as fsWrite } from 'node:fs';

/**
 * Bytes of log lines waiting to be written. A reader slower than the server
 * for longer than this much logging loses lines rather than holding memory:
 * 4 MiB is thousands of lines, seconds of a busy debug log.
 */
export const LOG_QUEUE_BYTES_MAX = 4 * 1024 * 1024;
/** Bytes per write call: lines are joined up to this, so a burst costs few system calls. */
const WRITE_BYTES_MAX = 64 * 1024;
/** Lines queued are written at most this long after the first of them (a line for a person or a collector, not a commit). */
const FLUSH_DELAY_MS = 20;
/** …or at once when this many bytes wait. */
const FLUSH_BYTES = 16 * 1024;
/** A write refused with EAGAIN (a non-blocking descriptor that is full) is tried again after this. */
const RETRY_AFTER_MS = 10;
/** Errors that mean nobody reads any more: no later write can succeed. */
const READER_GONE = new Set(['EPIPE', 'EBADF', 'ECONNRESET', 'ENOTCONN', 'EDESTADDRREQ']);

export class LogDestination {
  /** Lines dropped: the queue was full, a write failed, or the reader is gone. */
  dropped = 0;
  /** The error code that closed this destination (EPIPE…), if one did. */
  closedBy: string | undefined;
  private readonly queue: string[] = [];
  /** Bytes queued plus those of the write in flight. */
  private pendingBytes = 0;
  private writing = false;
  /** The write of the lines queued, waiting for FLUSH_DELAY_MS. */
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly idle: Array<() => void> = [];

  constructor(private readonly fd: number, private readonly queueBytesMax = LOG_QUEUE_BYTES_MAX) {}

  /** Queue one line (pino calls this with each, newline included); never blocks, never throws. */
  write(line: string): boolean {
    const bytes = Buffer.byteLength(line);
    if (this.closedBy !== undefined || this.pendingBytes + bytes > this.queueBytesMax) {
      this.dropped++;
      return true;
    }
    this.queue.push(line);
    this.pendingBytes += bytes;
    if (!this.writing) this.scheduleWrite();
    return true;
  }

  /** Resolves once every queued line is written (or dropped), or after `timeoutMs`, whichever comes first. */
  drain(timeoutMs: number): Promise<void> {
    if (!this.writing && this.queue.length === 0) return Promise.resolve();
    if (!this.writing) this.writeNext();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** The queued lines written now if they are many, else after FLUSH_DELAY_MS (unref'd: a log line never keeps a process alive). */
  private scheduleWrite(): void {
    if (this.pendingBytes >= FLUSH_BYTES) {
      this.writeNext();
    } else if (this.flushTimer === undefined && this.queue.length > 0) {
      this.flushTimer = setTimeout(() => this.writeNext(), FLUSH_DELAY_MS).unref();
    }
  }

  private writeNext(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.queue.length === 0) {
      this.writing = false;
      for (const wake of this.idle.splice(0)) wake();
      return;
    }
    this.writing = true;
    let lines = 0;
    let bytes = 0;
    while (lines < this.queue.length && (lines === 0 || bytes + this.queue[lines]!.length <= WRITE_BYTES_MAX)) {
      bytes += this.queue[lines]!.length;
      lines++;
    }
    const chunk = Buffer.from(this.queue.splice(0, lines).join(''));
    this.writeChunk(chunk, chunk.length, lines);
  }

  /** Write `chunk` (the rest of `chunkBytes` bytes holding `lines` lines), then the next. */
  private writeChunk(chunk: Buffer, chunkBytes: number, lines: number): void {
    fsWrite(this.fd, chunk, 0, chunk.length, null, (err, written) => {
      if (err !== null) {
        if (err.code === 'EAGAIN') {
          // Unref'd: a log line never keeps a process alive.
          setTimeout(() => this.writeChunk(chunk, chunkBytes, lines), RETRY_AFTER_MS).unref();
          return;
        }
        this.dropped += lines;
        this.pendingBytes -= chunkBytes;
        if (READER_GONE.has(err.code ?? '')) this.close(err.code as string);
        this.afterWrite();
        return;
      }
      if (written < chunk.length) {
        this.writeChunk(chunk.subarray(written), chunkBytes, lines);
        return;
      }
      this.pendingBytes -= chunkBytes;
      this.afterWrite();
    });
  }

  /** A write is done: the next one now if many lines wait, after the delay if a few do; idle if none. */
  private afterWrite(): void {
    if (this.queue.length === 0 || this.idle.length > 0) {
      this.writeNext();
      return;
    }
    this.writing = false;
    this.scheduleWrite();
  }

  private close(code: string): void {
    this.closedBy = code;
    this.dropped += this.queue.length;
    this.queue.length = 0;
    this.pendingBytes = 0;
  }
}
