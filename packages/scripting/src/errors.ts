/**
 * Error catalogue of the scripting package (API.md §4.2, §11.3). A script's
 * failure is the client's: 400 with the Lua message, and in the error body
 * `"script": {"name", "line"}` where known. Only an engine being replaced
 * after a fault is the server's (503).
 */
import { TesseraError } from '@tessera/errors';

/** Where in which script a failure happened: rendered as the error body's `script` member. */
export interface ScriptPlace {
  name?: string | undefined;
  line?: number | undefined;
}

function details(place: ScriptPlace): { details: Record<string, unknown> } {
  const script: Record<string, unknown> = {};
  if (place.name !== undefined) script.name = place.name;
  if (place.line !== undefined) script.line = place.line;
  return { details: { script } };
}

function label(place: ScriptPlace): string {
  const who = place.name === undefined ? 'Script' : `Script '${place.name}'`;
  return place.line === undefined ? who : `${who}, line ${place.line}`;
}

export const scriptErrors = {
  /** Lua refused to compile the body. */
  syntax: (place: ScriptPlace, message: string) =>
    new TesseraError('script_syntax_error', 400, `${label(place)}: ${message}`, details(place)),
  /** The script raised an error (its own `error()` or a Lua runtime error). */
  runtime: (place: ScriptPlace, message: string) =>
    new TesseraError('script_error', 400, `${label(place)}: ${message}`, details(place)),
  /** Instruction, memory, time or call-depth budget of one run overrun (API.md §13). */
  limit: (place: ScriptPlace, message: string) =>
    new TesseraError('script_limit_exceeded', 400, `${label(place)}: ${message}`, details(place)),
  /** What the script left in `_doc` (or returned) cannot be stored as a document. */
  badResult: (place: ScriptPlace, message: string) =>
    new TesseraError('script_bad_result', 400, `${label(place)}: ${message}`, details(place)),
  /** A parameter or document value that has no Lua form. */
  badValue: (what: string) => new TesseraError('script_bad_value', 400, what),
  /** The Lua engine faulted and its replacement is not ready yet. */
  unavailable: () =>
    new TesseraError('script_engine_unavailable', 503, 'The Lua engine is restarting after a fault; retry the write'),
};
