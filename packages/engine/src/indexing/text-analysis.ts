/**
 * Text analysis off the event loop (ENGINE.md, write path): the text values
 * of the documents a shard prepares in one event-loop turn go to the
 * process's analysis thread (text-worker.ts) as one message; it answers each
 * token as a term id of its dictionary, and new terms' strings once. The
 * write buffer maps those ids to its own with one array access per token
 * (BufferedPostings.addDocument), so tokenizing, stemming, building term
 * strings and hashing them leave the event loop that decodes, folds and
 * stores the next documents meanwhile.
 *
 * A document's `DeferredText.ready` always resolves: if the thread fails or
 * exits, the batch is analysed here instead, with a dictionary of this
 * thread (the ids name their dictionary, so they never mix). Batches are
 * analysed here too until the thread is ready (loading its modules takes
 * ~0.2 s, during which a bulk load would otherwise wait). The thread is
 * started on first use (or by `startTextWorker`), does not keep the process
 * alive while idle, is ended once idle for THREAD_IDLE_MS (idle-thread.ts:
 * its heap and dictionary, and this thread's mirror of it, go back), and is
 * started again after a failure or on the next use.
 */
import type { Worker } from 'node:worker_threads';
import { IdleRelease, startThread } from '../idle-thread.js';
import type { AnalyzerOptions } from '../analysis/analyzer.js';
import { analyzeRuns, DICTIONARY_TERMS_MAX, NamedDictionary, type TextRunsAnswer, type TextRunsRequest } from './text-runs.js';
import type { TextWorkerAnswer } from './text-worker.js';

/** A document's text tokens once analysed: ids of the dictionary `names` mirrors, with their positions. */
export class DeferredText {
  /** Resolves when `ids`, `positions` and `lengths` are set (never rejects). */
  ready: Promise<void> = Promise.resolve();
  dictionary = '';
  names: readonly string[] = [];
  ids: Int32Array = new Int32Array(0);
  positions: Int32Array = new Int32Array(0);
  /** Positions taken per namespace (field prefix, `''` for global terms): the BM25 field lengths. */
  readonly lengths = new Map<string, number>();
  resolved = false;
  /** The document's runs in its batch: [firstRun, firstRun + runCount). */
  constructor(readonly firstRun: number, public runCount: number) {}
}

/** The runs of the documents prepared in one event-loop turn: one message to the thread. */
class RunBatch {
  readonly texts: string[] = [];
  private runs: number[] = [];
  private readonly analyzers: AnalyzerOptions[] = [];
  /** By identity: the options object of a field spec (document-terms.ts keeps one per spec). */
  private readonly analyzerIndex = new Map<AnalyzerOptions, number>();
  private readonly prefixes: string[] = [];
  private readonly prefixIndex = new Map<string, number>();
  private readonly documents: DeferredText[] = [];
  private readonly runPrefixes: string[] = [];
  readonly ready: Promise<void>;
  private settle!: () => void;

  constructor() {
    this.ready = new Promise<void>((resolve) => {
      this.settle = resolve;
    });
  }

  /** Start a document's runs. */
  document(): DeferredText {
    const text = new DeferredText(this.texts.length, 0);
    text.ready = this.ready;
    this.documents.push(text);
    return text;
  }

  /** One text value of the last document started, in namespace `prefix`. */
  run(text: DeferredText, analyzer: AnalyzerOptions, prefix: string, fieldPosition: number, positional: boolean, value: string): void {
    let a = this.analyzerIndex.get(analyzer);
    if (a === undefined) {
      a = this.analyzers.length;
      this.analyzers.push({ language: analyzer.language, stemStrategy: analyzer.stemStrategy, stopStrategy: analyzer.stopStrategy });
      this.analyzerIndex.set(analyzer, a);
    }
    let p = this.prefixIndex.get(prefix);
    if (p === undefined) {
      p = this.prefixes.length;
      this.prefixes.push(prefix);
      this.prefixIndex.set(prefix, p);
    }
    this.runs.push(this.documents.length - 1, a, p, fieldPosition, positional ? 1 : 0);
    this.runPrefixes.push(prefix);
    this.texts.push(value);
    text.runCount++;
  }

  request(id: number): TextRunsRequest {
    const runs = Int32Array.from(this.runs);
    this.runs = [];
    return { id, texts: this.texts, runs, analyzers: this.analyzers, prefixes: this.prefixes };
  }

  /** Give each document its tokens and resolve `ready`; throws, changing nothing, when `answer` does not fit the mirror. */
  answer(answer: Omit<TextRunsAnswer, 'id'>): void {
    this.distribute(answer);
    this.settle();
  }

  private distribute(answer: Omit<TextRunsAnswer, 'id'>): void {
    const names = mirrorOf(answer);
    const { runEnds, runLengths } = answer;
    for (const doc of this.documents) {
      const last = doc.firstRun + doc.runCount - 1;
      const start = doc.firstRun === 0 ? 0 : runEnds[doc.firstRun - 1]!;
      const end = doc.runCount === 0 ? start : runEnds[last]!;
      doc.dictionary = answer.dictionary;
      doc.names = names;
      doc.ids = answer.termIds.subarray(start, end);
      doc.positions = answer.positions.subarray(start, end);
      for (let r = doc.firstRun; r <= last; r++) {
        const prefix = this.runPrefixes[r]!;
        doc.lengths.set(prefix, (doc.lengths.get(prefix) ?? 0) + runLengths[r]!);
      }
      doc.resolved = true;
    }
  }
}

/** The term strings of the thread's current dictionary, by id (grown from each answer's new terms). */
let mirror: { name: string; names: string[] } = { name: '', names: [] };
/** The dictionary batches use here when the thread failed. */
let local: NamedDictionary | null = null;
let localCount = 0;

function mirrorOf(answer: Omit<TextRunsAnswer, 'id'>): readonly string[] {
  if (local !== null && answer.dictionary === local.name) return local.terms.names;
  if (answer.dictionary !== mirror.name) mirror = { name: answer.dictionary, names: [] };
  const names = mirror.names;
  if (answer.firstNewId !== names.length) throw new Error(`analysis answer adds terms from ${answer.firstNewId}, the mirror has ${names.length}`);
  for (const term of answer.newTerms) names.push(term);
  return names;
}

let worker: Worker | null = null;
/** `worker` has said it takes requests. */
let workerReady = false;
/** Resolves once `worker` is ready or lost. */
let workerSettled: Promise<void> = Promise.resolve();
let workers = 0;
let nextId = 1;
let open: RunBatch | null = null;

/** Analyse a failed request's batch on this thread. */
function analyzeHere(batch: RunBatch, request: TextRunsRequest): void {
  if (local === null || local.terms.size > DICTIONARY_TERMS_MAX) local = new NamedDictionary(`main.${++localCount}`);
  batch.answer(analyzeRuns(request, local));
}

/** Requests sent and not answered yet, with the thread that has them. */
const requests = new Map<number, { batch: RunBatch; request: TextRunsRequest; thread: Worker }>();

function busyWith(thread: Worker): boolean {
  return [...requests.values()].some((e) => e.thread === thread);
}

const release = new IdleRelease(() => {
  const thread = worker;
  if (thread === null || busyWith(thread)) return;
  worker = null;
  workerReady = false;
  // The next thread's dictionary has another name: the mirror would be replaced at its first answer.
  mirror = { name: '', names: [] };
  void thread.terminate();
});

/** A thread failed or exited: what it held is analysed here. */
function failAll(thread: Worker): void {
  for (const [id, entry] of requests) {
    if (entry.thread !== thread) continue;
    requests.delete(id);
    analyzeHere(entry.batch, entry.request);
  }
}

function textWorker(): Worker {
  if (worker !== null) return worker;
  const started = startThread(new URL('./text-worker.js', import.meta.url), { workerData: { name: `thread${++workers}` } });
  let settle!: () => void;
  workerSettled = new Promise((resolve) => {
    settle = resolve;
  });
  started.on('message', (answer: TextWorkerAnswer) => {
    if ('ready' in answer) {
      if (worker === started) {
        workerReady = true;
        if (!busyWith(started)) release.idle();
      }
      settle();
      return;
    }
    const entry = requests.get(answer.id);
    if (entry === undefined) return;
    requests.delete(answer.id);
    if ('error' in answer) analyzeHere(entry.batch, entry.request);
    else {
      try {
        entry.batch.answer(answer);
      } catch {
        // The mirror lost step with the thread's dictionary: analyse here, and start over with a new thread.
        analyzeHere(entry.batch, entry.request);
        void started.terminate();
      }
    }
    if (!busyWith(started)) {
      started.unref();
      if (worker === started) release.idle();
    }
  });
  const lost = (): void => {
    if (worker === started) {
      worker = null;
      workerReady = false;
    }
    settle();
    failAll(started);
  };
  started.on('error', lost);
  started.on('exit', lost);
  // After the listeners: adding a 'message' listener refs a worker again, and an idle thread
  // started with a shard (its 'ready' answer unrefs nothing) then kept the process alive after close.
  started.unref();
  worker = started;
  return started;
}

function send(): void {
  const batch = open;
  open = null;
  if (batch === null) return;
  const request = batch.request(nextId++);
  let thread: Worker | undefined;
  try {
    thread = textWorker();
  } catch {
    thread = undefined;
  }
  // Here while the thread cannot start or is not ready yet.
  if (thread === undefined || !workerReady) {
    analyzeHere(batch, request);
    return;
  }
  try {
    requests.set(request.id, { batch, request, thread });
    release.busy();
    // Busy: keep the process alive until the answer is in.
    thread.ref();
    // Copied, not transferred: a failed request is analysed here from the same runs.
    thread.postMessage(request);
  } catch {
    requests.delete(request.id);
    analyzeHere(batch, request);
  }
}

/**
 * Start the analysis thread now, if it is not running, so that it is ready
 * when bulk writes come (a shard that may take them opens). Resolves once it
 * is ready, or failed; writes never wait for it.
 */
export function startTextWorker(): Promise<void> {
  try {
    textWorker();
  } catch {
    // No thread (resources): batches are analysed here, and the next one tries again.
  }
  return workerSettled;
}

/** Stop the analysis thread (what it held is analysed here; the next batch starts another). For tests and shutdown. */
export async function stopTextWorker(): Promise<void> {
  const running = worker;
  if (running === null) return;
  await running.terminate();
}

/** The batch of this event-loop turn (sent when the turn ends). */
export function textBatch(): RunBatch {
  if (open === null) {
    open = new RunBatch();
    setImmediate(send);
  }
  return open;
}

export type { RunBatch };
