/**
 * @tessera/scripting: Lua 5.4 scripts in writes (API.md §11), through
 * wasmoon's WebAssembly build of Lua: the sandbox, its budgets, the
 * compiled-chunk cache, and documents crossing into Lua and back.
 */
export { type ChunkCacheStats } from './chunk-cache.js';
export { type ScriptPlace, scriptErrors } from './errors.js';
export { rewriteLegacy } from './legacy.js';
export { type SandboxLimits } from './lua-sandbox.js';
export { SCRIPT_DEFAULTS, type ScriptRun, ScriptRunner, type ScriptRunnerOptions, type ScriptRunnerStats } from './runner.js';
