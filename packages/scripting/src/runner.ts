/**
 * The scripts of one process (DESIGN.md "Scripts"): one Lua sandbox, the
 * compiled-chunk cache in front of it, the budgets of every run, and counters
 * for metrics. `run` is synchronous: a shard calls it inside its per-document
 * read-modify-write, and the budgets bound how long it can take.
 *
 * A sandbox whose module faulted is closed and replaced in the background;
 * until the new one is ready, runs fail with 503 (the write is not applied).
 */
import { ChunkCache } from './chunk-cache.js';
import { scriptErrors } from './errors.js';
import { LuaSandbox, type SandboxLimits } from './lua-sandbox.js';

export interface ScriptRunnerOptions extends Partial<SandboxLimits> {
  /** Compiled chunks kept (LRU). */
  cacheEntriesMax?: number;
  /** A chunk is compiled again after this long, ms; 0: never. */
  cacheTtlMs?: number;
}

export const SCRIPT_DEFAULTS: Required<ScriptRunnerOptions> = {
  cacheEntriesMax: 100,
  cacheTtlMs: 0,
  instructionsMax: 10_000_000,
  memoryBytesMax: 64 * 1024 * 1024,
  timeMsMax: 1000,
  callDepthMax: 1000,
  depthMax: 128,
  fieldsMax: 10_000,
  patternStepsMax: 1_000_000,
  stringBytesMax: 4 * 1024 * 1024,
};

/** One script run: the source, its parameters, and the documents it sees. */
export interface ScriptRun {
  body: string;
  /** The script's name, when it has one (error messages). */
  name?: string | undefined;
  params?: Record<string, unknown> | undefined;
  /** `_doc`: the document being written (after UPDATE's merge). */
  doc: Record<string, unknown>;
  /** `_old_doc`: the stored document; `{}` when there is none. */
  oldDoc?: Record<string, unknown> | undefined;
  /** `_method`: PUT, POST, UPDATE, PATCH, DELETE… */
  method: string;
}

export interface ScriptRunnerStats {
  cacheHits: number;
  cacheMisses: number;
  cacheEvictions: number;
  cacheExpirations: number;
  cacheEntries: number;
  /** Bodies compiled (misses that compiled; a syntax error compiles nothing). */
  compiles: number;
  runs: number;
  /** Runs that ended in an error (the write was refused). */
  failures: number;
  /** Sandboxes replaced after a fault of their module. */
  enginesReplaced: number;
  /** Bytes the Lua state holds. */
  memoryBytes: number;
}

export class ScriptRunner {
  private readonly cache: ChunkCache;
  private readonly limits: SandboxLimits;
  private sandbox: LuaSandbox | undefined;
  private replacing: Promise<void> | undefined;
  private closed = false;
  private readonly counts = { compiles: 0, runs: 0, failures: 0, enginesReplaced: 0 };

  private constructor(options: Required<ScriptRunnerOptions>, sandbox: LuaSandbox) {
    this.limits = limitsOf(options);
    this.sandbox = sandbox;
    this.cache = new ChunkCache({
      entriesMax: options.cacheEntriesMax,
      ttlMs: options.cacheTtlMs,
      release: (chunk) => this.sandbox?.release(chunk),
    });
  }

  static async create(options: ScriptRunnerOptions = {}): Promise<ScriptRunner> {
    const resolved = resolveOptions(options);
    return new ScriptRunner(resolved, await LuaSandbox.create(limitsOf(resolved)));
  }

  /** The limits every run has. */
  get settings(): Readonly<SandboxLimits> {
    return this.limits;
  }

  /**
   * Run a script; returns the document it leaves (`_doc`, or the table it
   * returned). Throws a 400 TesseraError for a script error or an overrun
   * budget, with the Lua message and the script line.
   */
  run(script: ScriptRun): Record<string, unknown> {
    const sandbox = this.sandbox;
    if (sandbox === undefined) {
      if (this.replacing === undefined && !this.closed) this.startSandbox();
      throw scriptErrors.unavailable();
    }
    this.counts.runs++;
    try {
      let chunk = this.cache.get(script.body);
      if (chunk === undefined) {
        chunk = sandbox.compile(script.body, { name: script.name });
        this.counts.compiles++;
        this.cache.set(script.body, chunk);
      }
      return sandbox.run({
        chunk, doc: script.doc, oldDoc: script.oldDoc, method: script.method, params: script.params, name: script.name,
      });
    } catch (err) {
      this.counts.failures++;
      if (sandbox.broken) this.replace(sandbox);
      throw err;
    }
  }

  stats(): ScriptRunnerStats {
    const cache = this.cache.stats();
    return {
      cacheHits: cache.hits,
      cacheMisses: cache.misses,
      cacheEvictions: cache.evictions,
      cacheExpirations: cache.expirations,
      cacheEntries: cache.entries,
      ...this.counts,
      memoryBytes: this.sandbox?.memoryBytes ?? 0,
    };
  }

  /** Resolves once a replacement in progress (after a fault) is done. */
  async ready(): Promise<void> {
    await this.replacing;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.replacing;
    this.sandbox?.close();
    this.sandbox = undefined;
  }

  private replace(broken: LuaSandbox): void {
    if (this.sandbox !== broken) return;
    this.sandbox = undefined;
    this.cache.forgetAll();
    broken.close();
    this.counts.enginesReplaced++;
    this.startSandbox();
  }

  private startSandbox(): void {
    this.replacing = LuaSandbox.create(this.limits).then(
      (fresh) => {
        if (this.closed) fresh.close();
        else this.sandbox = fresh;
      },
      // The next run tries again; until then runs answer 503.
      () => undefined,
    ).finally(() => {
      this.replacing = undefined;
    });
  }
}

function resolveOptions(options: ScriptRunnerOptions): Required<ScriptRunnerOptions> {
  const out = { ...SCRIPT_DEFAULTS };
  for (const key of Object.keys(SCRIPT_DEFAULTS) as Array<keyof ScriptRunnerOptions>) {
    const value = options[key];
    if (value === undefined) continue;
    // patternStepsMax: 0 sends every pattern with an item to the Lua matcher, -1 every pattern (tests).
    const min = key === 'patternStepsMax' ? -1 : key === 'cacheTtlMs' ? 0 : 1;
    if (!Number.isSafeInteger(value) || value < min) throw new RangeError(`${key} must be an integer of at least ${min}`);
    out[key] = value;
  }
  return out;
}

function limitsOf(options: Required<ScriptRunnerOptions>): SandboxLimits {
  return {
    instructionsMax: options.instructionsMax,
    memoryBytesMax: options.memoryBytesMax,
    timeMsMax: options.timeMsMax,
    callDepthMax: options.callDepthMax,
    depthMax: options.depthMax,
    fieldsMax: options.fieldsMax,
    patternStepsMax: options.patternStepsMax,
    stringBytesMax: options.stringBytesMax,
  };
}
