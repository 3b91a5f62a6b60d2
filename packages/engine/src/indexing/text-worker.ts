/**
 * The analysis thread (text-analysis.ts): tokenizes, stems and looks up the
 * text runs of written documents, answering term ids of its dictionary.
 * Requests are answered in order. The dictionary starts over (under a new
 * name) past DICTIONARY_TERMS_MAX terms, so hostile input cannot grow it
 * without bound.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { analyzeRuns, DICTIONARY_TERMS_MAX, NamedDictionary, type TextRunsAnswer, type TextRunsRequest } from './text-runs.js';

/** An answer to a request, or the thread saying it takes requests (its first message). */
export type TextWorkerAnswer = TextRunsAnswer | { readonly id: number; readonly error: string } | { readonly ready: true };

const port = parentPort;
if (port !== null) {
  const base = String((workerData as { name?: unknown } | null)?.name ?? 'thread');
  let resets = 0;
  let dictionary = new NamedDictionary(`${base}.${resets}`);
  port.on('message', (request: TextRunsRequest) => {
    try {
      if (dictionary.terms.size > DICTIONARY_TERMS_MAX) dictionary = new NamedDictionary(`${base}.${++resets}`);
      const answer: TextRunsAnswer = { id: request.id, ...analyzeRuns(request, dictionary) };
      port.postMessage(answer, [answer.termIds.buffer, answer.positions.buffer, answer.runEnds.buffer, answer.runLengths.buffer] as ArrayBuffer[]);
    } catch (err) {
      port.postMessage({ id: request.id, error: err instanceof Error ? err.stack ?? err.message : String(err) } satisfies TextWorkerAnswer);
    }
  });
  port.postMessage({ ready: true } satisfies TextWorkerAnswer);
}
