/**
 * One Lua 5.4 state in its own WebAssembly instance, with the prelude's
 * sandbox (prelude.ts): compiles bodies to chunks kept in the Lua registry,
 * and runs a chunk against a document, synchronously, within its budgets.
 *
 * Memory is counted by our own allocator (a JS function the state calls for
 * every allocation): during a run it refuses growth past the run's start plus
 * `memoryBytesMax`, refuses one block larger than a quarter of it (copying and
 * rehashing a 32 MB table array took ~0.4 s of uninterruptible C on a loaded
 * machine), and refuses any allocation of LARGE_ALLOCATION_BYTES or more once
 * the run's time is up, so C code churning big strings is stopped too (the
 * count hook only sees Lua instructions). Values are pushed with no
 * limit, before the run starts: a memory error outside a protected call would
 * abort the module.
 *
 * A JS exception out of the module (a trap, an abort) leaves the state in an
 * unknown condition: the sandbox is then `broken` and must be replaced.
 */
import {
  loadLuaModule, LUA_ERRERR, LUA_ERRMEM, LUA_ERRSYNTAX, LUA_OK, LUA_REGISTRYINDEX, LUA_TNIL, LUA_TSTRING, LUA_TTABLE,
  LUA_TYPE_NAMES, type LuaState, type Pointer, type RawLua,
} from './lua-raw.js';
import { LuaValues, ValueError } from './lua-values.js';
import { PRELUDE, SCRIPT_CHUNK_NAME } from './prelude.js';
import { rewriteLegacy } from './legacy.js';
import { scriptErrors, type ScriptPlace } from './errors.js';
import { TesseraError } from '@tessera/errors';

export interface SandboxLimits {
  /** Lua instructions per run (API.md §13: 10⁷). */
  instructionsMax: number;
  /** Bytes a run may allocate beyond what the state held when it started (API.md §13: 64 MiB). */
  memoryBytesMax: number;
  /** Time per run, ms: the backstop for C work the instruction count does not see. */
  timeMsMax: number;
  /** Nested Lua calls (deep recursion). */
  callDepthMax: number;
  /** Nesting of documents and parameters. */
  depthMax: number;
  /** Fields and array items in the resulting document. */
  fieldsMax: number;
  /** Worst-case steps of one C pattern call above which the matcher written in Lua runs (patterns.ts), and of one plain search. */
  patternStepsMax: number;
  /** Longest string one library call takes or builds (string.rep, gsub's subject, format's result…); 1/64 of it for patterns and pack formats. */
  stringBytesMax: number;
}

export interface SandboxRun {
  chunk: number;
  doc: Record<string, unknown>;
  oldDoc: Record<string, unknown> | undefined;
  method: string;
  params: Record<string, unknown> | undefined;
  name: string | undefined;
}

/** Instructions between two calls of the count hook: budget, time and depth checks cost ~1 µs each time. */
const HOOK_EVERY = 1000;
/** One block may hold at most this share of a run's memory budget (strings, table arrays). */
const BLOCK_SHARE = 4;
/** Allocations this large are refused once the run's time is up. */
const LARGE_ALLOCATION_BYTES = 64 * 1024;
/** Garbage left by runs is collected once the state holds this much more than after its prelude. */
const GARBAGE_BYTES_MAX = 16 * 1024 * 1024;
const NAME_BUFFER = new TextEncoder().encode(`${SCRIPT_CHUNK_NAME}\0`);
const PRELUDE_NAME_BUFFER = new TextEncoder().encode('=prelude\0');
const TEXT_MODE = new TextEncoder().encode('t\0');
const POSITION = /^script:(\d+): /;
/** Errors raised by the prelude's library wrappers carry the wrapper's position: not the script's business. */
const PRELUDE_POSITION = /^prelude:\d+: /;

/** What the allocator enforces, read on every allocation. */
interface Budget {
  used: number;
  max: number;
  /** performance.now() past which large allocations fail; 0: none. */
  deadline: number;
  /** Largest block one allocation may have (Infinity outside runs). */
  blockMax: number;
  memoryRefused: boolean;
  blockRefused: boolean;
  timeRefused: boolean;
}

/** Which of the allocator's refusals happened during a run. */
interface Refusals {
  memory: boolean;
  block: boolean;
  time: boolean;
}

/** Registry references of the prelude's results (BigInts: lua_rawgeti takes a lua_Integer). */
interface PreludeRefs {
  run: bigint;
  onError: bigint;
  lastFailure: bigint;
  collect: bigint;
  envMetatable: bigint;
}

export class LuaSandbox {
  /** A JS exception came out of the module: never use this sandbox again. */
  broken = false;
  private closed = false;
  private collectPending = false;
  private readonly baseline: number;

  private constructor(
    private readonly raw: RawLua,
    private readonly L: LuaState,
    private readonly allocator: Pointer,
    private readonly budget: Budget,
    private readonly refs: PreludeRefs,
    private readonly values: LuaValues,
    private readonly constants: { name: Pointer; mode: Pointer },
    private readonly limits: SandboxLimits,
  ) {
    this.baseline = budget.used;
  }

  static async create(limits: SandboxLimits): Promise<LuaSandbox> {
    const raw = await loadLuaModule();
    const budget: Budget = { used: 0, max: Infinity, deadline: 0, blockMax: Infinity, memoryRefused: false, blockRefused: false, timeRefused: false };
    const allocator = raw.addFunction((_ud: number, pointer: number, oldSize: number, newSize: number): number => {
      if (newSize === 0) {
        if (pointer !== 0) {
          budget.used -= oldSize;
          raw._free(pointer);
        }
        return 0;
      }
      // With a null pointer, oldSize encodes the kind of object, not a size.
      const growth = pointer === 0 ? newSize : newSize - oldSize;
      if (growth > 0) {
        if (budget.used + growth > budget.max) {
          budget.memoryRefused = true;
          return 0;
        }
        if (newSize > budget.blockMax) {
          budget.blockRefused = true;
          return 0;
        }
        if (growth >= LARGE_ALLOCATION_BYTES && budget.deadline !== 0 && performance.now() > budget.deadline) {
          budget.timeRefused = true;
          return 0;
        }
      }
      const moved = raw._realloc(pointer, newSize);
      if (moved !== 0) budget.used += growth;
      return moved;
    }, 'iiiii');
    const L = raw._lua_newstate(allocator, 0);
    if (L === 0) throw new Error('lua_newstate failed');
    raw._luaL_openlibs(L);
    const constants = { name: copyBytes(raw, NAME_BUFFER), mode: copyBytes(raw, TEXT_MODE) };
    const preludeName = copyBytes(raw, PRELUDE_NAME_BUFFER);
    const source = new TextEncoder().encode(PRELUDE);
    const sourcePointer = copyBytes(raw, source);
    const status = raw._luaL_loadbufferx(L, sourcePointer, source.length, preludeName, constants.mode);
    raw._free(sourcePointer);
    raw._free(preludeName);
    if (status !== LUA_OK) throw new Error(`the scripting prelude does not compile (status ${status})`);
    raw._lua_pushlightuserdata(L, 0);
    raw._lua_pushinteger(L, BigInt(HOOK_EVERY));
    raw._lua_pushinteger(L, BigInt(limits.instructionsMax));
    raw._lua_pushnumber(L, limits.timeMsMax / 1000);
    raw._lua_pushinteger(L, BigInt(limits.callDepthMax));
    raw._lua_pushnumber(L, limits.patternStepsMax);
    raw._lua_pushinteger(L, BigInt(limits.stringBytesMax));
    if (raw._lua_pcallk(L, 7, 7, 0, 0, 0) !== LUA_OK) {
      const message = raw._lua_type(L, -1) === LUA_TSTRING ? readCString(raw, raw._lua_tolstring(L, -1, 0)) : 'unknown error';
      throw new Error(`the scripting prelude failed: ${message}`);
    }
    // Results, last on top: run, on_error, last_failure, collect, env_mt, array_mt, object_mt.
    const objectMetatable = raw._luaL_ref(L, LUA_REGISTRYINDEX);
    const arrayMetatable = raw._luaL_ref(L, LUA_REGISTRYINDEX);
    const envMetatable = raw._luaL_ref(L, LUA_REGISTRYINDEX);
    const collect = raw._luaL_ref(L, LUA_REGISTRYINDEX);
    const lastFailure = raw._luaL_ref(L, LUA_REGISTRYINDEX);
    const onError = raw._luaL_ref(L, LUA_REGISTRYINDEX);
    const run = raw._luaL_ref(L, LUA_REGISTRYINDEX);
    const values = new LuaValues(raw, L, arrayMetatable, objectMetatable, { depthMax: limits.depthMax, fieldsMax: limits.fieldsMax });
    const refs: PreludeRefs = {
      run: BigInt(run), onError: BigInt(onError), lastFailure: BigInt(lastFailure), collect: BigInt(collect), envMetatable: BigInt(envMetatable),
    };
    return new LuaSandbox(raw, L, allocator, budget, refs, values, constants, limits);
  }

  /** Bytes the Lua state holds (compiled chunks, library, garbage not yet collected). */
  get memoryBytes(): number {
    return this.budget.used;
  }

  /** Compile a body (text only, never bytecode) to a chunk; returns its registry reference. */
  compile(body: string, place: ScriptPlace): number {
    return this.guarded(() => {
      const raw = this.raw;
      const L = this.L;
      const top = raw._lua_gettop(L);
      const { pointer, bytes } = this.values.write(rewriteLegacy(body));
      this.startBudget();
      const status = raw._luaL_loadbufferx(L, pointer, bytes, this.constants.name, this.constants.mode);
      const refused = this.stopBudget();
      try {
        if (status === LUA_OK) return raw._luaL_ref(L, LUA_REGISTRYINDEX);
        if (status === LUA_ERRMEM) throw scriptErrors.limit(place, this.memoryMessage(refused));
        const message = raw._lua_type(L, -1) === LUA_TSTRING ? this.values.readString(-1) : 'syntax error';
        const position = POSITION.exec(message);
        const at: ScriptPlace = { name: place.name, line: position === null ? undefined : Number(position[1]) };
        throw (status === LUA_ERRSYNTAX ? scriptErrors.syntax : scriptErrors.runtime)(at, message.replace(POSITION, ''));
      } finally {
        raw._lua_settop(L, top);
      }
    });
  }

  /** Drop a compiled chunk. */
  release(chunk: number): void {
    if (this.broken || this.closed) return;
    this.guarded(() => this.raw._luaL_unref(this.L, LUA_REGISTRYINDEX, chunk));
  }

  /** Run a chunk with `_doc`, `_old_doc`, `_method` and the parameters; returns the resulting document. */
  run(input: SandboxRun): Record<string, unknown> {
    return this.guarded(() => {
      const raw = this.raw;
      const L = this.L;
      const top = raw._lua_gettop(L);
      const place: ScriptPlace = { name: input.name };
      if (this.collectPending) this.collect();
      try {
        if (raw._lua_checkstack(L, this.limits.depthMax * 3 + 40) === 0) throw new Error('no room on the Lua stack');
        raw._lua_rawgeti(L, LUA_REGISTRYINDEX, this.refs.onError);
        raw._lua_rawgeti(L, LUA_REGISTRYINDEX, this.refs.run);
        raw._lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(input.chunk));
        this.pushEnvironment(input);
        this.startBudget();
        const status = raw._lua_pcallk(L, 2, 2, top + 1, 0, 0);
        const refused = this.stopBudget();
        raw._lua_sethook(L, 0, 0, 0);
        if (status !== LUA_OK) throw this.failure(status, place, refused);
        let result = top + 3;
        const returned = raw._lua_type(L, top + 2);
        if (returned !== LUA_TNIL) {
          if (returned !== LUA_TTABLE) {
            throw scriptErrors.badResult(place, `returned a ${LUA_TYPE_NAMES[returned] ?? 'value'}: return a table (the new document) or nothing`);
          }
          result = top + 2;
        } else if (raw._lua_type(L, result) !== LUA_TTABLE) {
          throw scriptErrors.badResult(place, '_doc must be a table when the script ends');
        }
        return this.readDocument(result, place);
      } finally {
        if (!this.broken) {
          raw._lua_settop(L, top);
          this.values.resetRun();
          if (this.budget.used > this.baseline + GARBAGE_BYTES_MAX) this.collectSoon();
        }
      }
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.broken) return;
    this.values.free();
    this.raw._free(this.constants.name);
    this.raw._free(this.constants.mode);
    this.raw._lua_close(this.L);
    this.raw.removeFunction(this.allocator);
  }

  private pushEnvironment(input: SandboxRun): void {
    const raw = this.raw;
    const L = this.L;
    const values = this.values;
    const params = input.params;
    raw._lua_createtable(L, 0, 5 + (params === undefined ? 0 : Object.keys(params).length));
    try {
      if (params !== undefined) {
        for (const key of Object.keys(params)) {
          const value = params[key];
          if (value === undefined) continue;
          values.pushString(key);
          values.push(value, 1);
          raw._lua_rawset(L, -3);
        }
      }
      values.pushString('_method');
      values.pushString(input.method);
      raw._lua_rawset(L, -3);
      values.pushString('_doc');
      values.push(input.doc, 1);
      raw._lua_rawset(L, -3);
      values.pushString('_old_doc');
      values.push(input.oldDoc ?? {}, 1);
      raw._lua_rawset(L, -3);
    } catch (err) {
      if (err instanceof ValueError) throw scriptErrors.badValue(`A document or parameter value cannot be passed to the script: ${err.message}`);
      throw err;
    }
    values.pushString('_G');
    raw._lua_pushvalue(L, -2);
    raw._lua_rawset(L, -3);
    raw._lua_rawgeti(L, LUA_REGISTRYINDEX, this.refs.envMetatable);
    raw._lua_setmetatable(L, -2);
  }

  private readDocument(index: number, place: ScriptPlace): Record<string, unknown> {
    try {
      const doc = this.values.read(index, 1);
      if (Array.isArray(doc)) throw new ValueError('a document must be an object, not an array');
      return doc as Record<string, unknown>;
    } catch (err) {
      if (err instanceof ValueError) throw scriptErrors.badResult(place, `cannot store ${err.where()}: ${err.message}`);
      throw err;
    }
  }

  /** The TesseraError for a failed run; the error object is on top of the stack. */
  private failure(status: number, place: ScriptPlace, refused: Refusals): TesseraError {
    const raw = this.raw;
    const L = this.L;
    if (status === LUA_ERRMEM) return scriptErrors.limit(place, this.memoryMessage(refused));
    const message = raw._lua_type(L, -1) === LUA_TSTRING
      ? this.values.readString(-1)
      : `(error object is a ${LUA_TYPE_NAMES[raw._lua_type(L, -1)] ?? 'non-string'} value)`;
    const { line, budget } = this.lastFailure();
    const position = POSITION.exec(message);
    const at: ScriptPlace = { name: place.name, line: line ?? (position === null ? undefined : Number(position[1])) };
    if (budget !== undefined) {
      return scriptErrors.limit(at, budget === 'not enough memory' ? this.memoryMessage(refused) : budget);
    }
    // A refused allocation Lua recovered from (its emergency collection) is not the failure: only its error is.
    if (message === 'not enough memory' || (status === LUA_ERRERR && (refused.memory || refused.block || refused.time))) {
      return scriptErrors.limit(at, this.memoryMessage(refused));
    }
    if (status === LUA_ERRERR) return scriptErrors.runtime(at, 'error while handling an error');
    const text = message.replace(POSITION, '').replace(PRELUDE_POSITION, '');
    if (/^(C )?stack overflow/.test(text)) return scriptErrors.limit(at, text);
    return scriptErrors.runtime(at, text);
  }

  /** The script line the last error came from, and the budget it overran (prelude's `last_failure`). */
  private lastFailure(): { line: number | undefined; budget: string | undefined } {
    const raw = this.raw;
    const L = this.L;
    const top = raw._lua_gettop(L);
    raw._lua_rawgeti(L, LUA_REGISTRYINDEX, this.refs.lastFailure);
    if (raw._lua_pcallk(L, 0, 2, 0, 0, 0) !== LUA_OK) {
      raw._lua_settop(L, top);
      return { line: undefined, budget: undefined };
    }
    const line = Number(raw._lua_tointegerx(L, -2, 0));
    const budget = raw._lua_type(L, -1) === LUA_TSTRING ? this.values.readString(-1) : undefined;
    raw._lua_settop(L, top);
    return { line: line > 0 ? line : undefined, budget };
  }

  private memoryMessage(refused: Refusals): string {
    if (refused.memory) return `memory limit exceeded (${this.limits.memoryBytesMax} bytes)`;
    if (refused.block) return `memory limit exceeded (one block over ${this.limits.memoryBytesMax / BLOCK_SHARE} bytes)`;
    if (refused.time) return `time limit exceeded (${this.limits.timeMsMax} ms)`;
    return `memory limit exceeded (${this.limits.memoryBytesMax} bytes)`;
  }

  private startBudget(): void {
    const budget = this.budget;
    budget.max = budget.used + this.limits.memoryBytesMax;
    budget.blockMax = this.limits.memoryBytesMax / BLOCK_SHARE;
    budget.deadline = performance.now() + this.limits.timeMsMax;
    budget.memoryRefused = false;
    budget.blockRefused = false;
    budget.timeRefused = false;
  }

  private stopBudget(): Refusals {
    const budget = this.budget;
    budget.max = Infinity;
    budget.blockMax = Infinity;
    budget.deadline = 0;
    return { memory: budget.memoryRefused, block: budget.blockRefused, time: budget.timeRefused };
  }

  /**
   * A full collection of what a run left (tens of ms for 64 MB of small strings) runs after the
   * caller has answered, not inside the failed run's answer time; a run starting first does it before its budget.
   */
  private collectSoon(): void {
    if (this.collectPending) return;
    this.collectPending = true;
    setImmediate(() => {
      if (!this.collectPending || this.broken || this.closed) return;
      try {
        this.guarded(() => this.collect());
      } catch {
        // The module faulted: the sandbox is marked broken, and the runner replaces it at its next run.
      }
    }).unref();
  }

  private collect(): void {
    this.collectPending = false;
    const raw = this.raw;
    const L = this.L;
    const top = raw._lua_gettop(L);
    raw._lua_rawgeti(L, LUA_REGISTRYINDEX, this.refs.collect);
    raw._lua_pcallk(L, 0, 0, 0, 0, 0);
    raw._lua_settop(L, top);
  }

  /** Run `work`; a non-Tessera exception means the module faulted: mark the sandbox broken. */
  private guarded<T>(work: () => T): T {
    if (this.broken || this.closed) throw scriptErrors.unavailable();
    try {
      return work();
    } catch (err) {
      if (err instanceof TesseraError) throw err;
      this.broken = true;
      const what = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      throw scriptErrors.runtime({}, `the Lua engine failed (${what}) and is being replaced`);
    }
  }
}

function readCString(raw: RawLua, pointer: Pointer): string {
  const heap = raw.HEAPU8;
  let end = pointer;
  while (heap[end] !== 0) end++;
  return new TextDecoder().decode(heap.subarray(pointer, end));
}

function copyBytes(raw: RawLua, bytes: Uint8Array): Pointer {
  const pointer = raw._malloc(bytes.length);
  if (pointer === 0) throw new Error('no memory for the Lua module');
  raw.HEAPU8.set(bytes, pointer);
  return pointer;
}
