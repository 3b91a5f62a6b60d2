/**
 * Progress of a bulk command on standard error: a cli-progress bar (docs/s,
 * errors, ETA when the input size is known) when it is a terminal, else one
 * plain line every few seconds (logs and CI have no use for redraws). Other
 * messages go through `log` so they never tear the bar.
 */
import cliProgress from 'cli-progress';

export interface ProgressState {
  /** Documents the server confirmed. */
  documents: number;
  errors: number;
  /** Items read from the input so far (the confirmed ones and those still in flight). */
  itemsRead: number;
  /** Input bytes read so far, and the input's size when known (a regular file). */
  bytesRead: number;
  bytesTotal: number | undefined;
  /** Documents the work will hold, when known instead of an input size (a snapshot): the bar and ETA follow them. */
  documentsTotal?: number | undefined;
}

export interface ProgressOptions {
  /** Draw nothing (errors still go to `log`). */
  enabled: boolean;
  /** Period of the plain progress lines, ms. */
  intervalMs: number;
  /** Prefix of the plain lines, e.g. `import`. */
  label: string;
  stream?: NodeJS.WriteStream;
}

export class Progress {
  private readonly stream: NodeJS.WriteStream;
  private readonly startedAt = Date.now();
  private bars: cliProgress.MultiBar | undefined;
  private bar: cliProgress.SingleBar | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: ProgressOptions, private readonly state: () => ProgressState) {
    this.stream = options.stream ?? process.stderr;
  }

  start(): void {
    if (!this.options.enabled) return;
    if (this.stream.isTTY === true) {
      const sized = this.total() !== undefined;
      this.bars = new cliProgress.MultiBar({
        stream: this.stream,
        format: sized
          ? '{bar} {percentage}% | {documents} docs | {rate} docs/s | {errors} errors | ETA {eta_formatted}'
          : '{documents} docs | {rate} docs/s | {errors} errors | {duration_formatted}',
        hideCursor: true,
        etaBuffer: 50,
        fps: 5,
      }, cliProgress.Presets.shades_classic);
      this.bar = this.bars.create(this.total() ?? 0, 0, this.payload());
      this.timer = setInterval(() => this.draw(), 200);
    } else {
      this.timer = setInterval(() => this.stream.write(`${this.line()}\n`), this.options.intervalMs);
    }
    this.timer.unref();
  }

  /** A message above the bar (or a plain line); `text` has no final newline. */
  log(text: string): void {
    if (this.bars !== undefined) this.bars.log(`${text}\n`);
    else this.stream.write(`${text}\n`);
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    if (this.bars !== undefined) {
      this.draw();
      this.bars.stop();
      this.bars = undefined;
    }
  }

  /** Documents per second since the start. */
  rate(): number {
    const seconds = (Date.now() - this.startedAt) / 1000;
    return seconds > 0 ? this.state().documents / seconds : 0;
  }

  private draw(): void {
    this.bar?.update(this.done(this.state()), this.payload());
  }

  /** What the bar counts to: the input's bytes, else the documents expected, else unknown. */
  private total(): number | undefined {
    const s = this.state();
    return s.bytesTotal ?? s.documentsTotal;
  }

  private done(s: ProgressState): number {
    if (s.bytesTotal !== undefined) return this.bytesDone(s);
    return s.documentsTotal === undefined ? 0 : s.documents;
  }

  /**
   * Input bytes whose items the server has answered: bytes read scaled by
   * the share of items read that are answered, so the batches in flight (and
   * read-ahead) do not make the bar and the ETA run ahead.
   */
  private bytesDone(s: ProgressState): number {
    return s.itemsRead === 0 ? 0 : s.bytesRead * Math.min(1, (s.documents + s.errors) / s.itemsRead);
  }

  private payload(): Record<string, string | number> {
    const s = this.state();
    return { documents: s.documents, errors: s.errors, rate: Math.round(this.rate()) };
  }

  /** `import: 12000 docs, 2345 docs/s, 3 errors, 45% of 24.1 MiB read, ETA 30 s` */
  private line(): string {
    const s = this.state();
    let text = `${this.options.label}: ${s.documents} docs, ${Math.round(this.rate())} docs/s, ${s.errors} errors`;
    if (s.bytesTotal !== undefined && s.bytesTotal > 0) {
      const fraction = this.bytesDone(s) / s.bytesTotal;
      text += `, ${Math.floor(fraction * 100)}% of ${mebibytes(s.bytesTotal)} done`;
      const elapsed = (Date.now() - this.startedAt) / 1000;
      if (fraction > 0.01) text += `, ETA ${Math.round(elapsed / fraction - elapsed)} s`;
    } else if (s.documentsTotal !== undefined && s.documentsTotal > 0) {
      const fraction = s.documents / s.documentsTotal;
      text += `, ${Math.floor(fraction * 100)}% of ${s.documentsTotal} docs`;
      const elapsed = (Date.now() - this.startedAt) / 1000;
      if (fraction > 0.01 && fraction < 1) text += `, ETA ${Math.round(elapsed / fraction - elapsed)} s`;
    } else {
      text += `, ${mebibytes(s.bytesRead)} read`;
    }
    return text;
  }
}

export function mebibytes(bytes: number): string {
  return `${(bytes / 1048576).toFixed(1)} MiB`;
}
