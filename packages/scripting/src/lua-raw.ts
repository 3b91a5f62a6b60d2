/**
 * The Lua C API of wasmoon's WebAssembly module, called directly: no
 * per-call argument conversion (a string crosses as a pointer and a length
 * into the module's memory), no wasmoon value wrappers. lua_Integer is
 * 64-bit, so it crosses as a BigInt; pointers and sizes are wasm32 numbers.
 *
 * wasmoon 1.16 ships an Emscripten build with ASSERTIONS: every export on its
 * Module object is a wrapper that builds a template string and an `arguments`
 * object per call — measured at a third of a small script's run. So the
 * instance's own exports are taken as WebAssembly.instantiate returns them
 * (instantiation is serialised, and only an instance exporting lua_newstate
 * is taken); the Module object still provides the memory views and the
 * function table (addFunction).
 */
import { LuaFactory } from 'wasmoon';

export type Pointer = number;
/** A lua_State*. */
export type LuaState = number;

export interface RawLua {
  HEAPU8: Uint8Array;
  HEAPU32: Uint32Array;
  addFunction(fn: (...args: number[]) => number, signature: string): Pointer;
  removeFunction(pointer: Pointer): void;
  _malloc(size: number): Pointer;
  _free(pointer: Pointer): void;
  _realloc(pointer: Pointer, size: number): Pointer;

  _lua_newstate(alloc: Pointer, ud: Pointer): LuaState;
  _lua_close(L: LuaState): void;
  _luaL_openlibs(L: LuaState): void;
  _lua_gettop(L: LuaState): number;
  _lua_settop(L: LuaState, index: number): void;
  _lua_absindex(L: LuaState, index: number): number;
  _lua_checkstack(L: LuaState, n: number): number;
  _lua_pushvalue(L: LuaState, index: number): void;
  _lua_pushnil(L: LuaState): void;
  _lua_pushnumber(L: LuaState, n: number): void;
  _lua_pushinteger(L: LuaState, n: bigint): void;
  _lua_pushlstring(L: LuaState, s: Pointer, length: number): Pointer;
  _lua_pushboolean(L: LuaState, b: number): void;
  _lua_pushlightuserdata(L: LuaState, p: Pointer): void;
  _lua_createtable(L: LuaState, narr: number, nrec: number): void;
  _lua_rawset(L: LuaState, index: number): void;
  _lua_rawseti(L: LuaState, index: number, n: bigint): void;
  _lua_rawgeti(L: LuaState, index: number, n: bigint): number;
  _lua_setmetatable(L: LuaState, index: number): number;
  _lua_getmetatable(L: LuaState, index: number): number;
  _lua_type(L: LuaState, index: number): number;
  _lua_toboolean(L: LuaState, index: number): number;
  _lua_isinteger(L: LuaState, index: number): number;
  _lua_tonumberx(L: LuaState, index: number, isnum: Pointer): number;
  _lua_tointegerx(L: LuaState, index: number, isnum: Pointer): bigint;
  _lua_tolstring(L: LuaState, index: number, length: Pointer): Pointer;
  _lua_touserdata(L: LuaState, index: number): Pointer;
  _lua_topointer(L: LuaState, index: number): Pointer;
  _lua_rawequal(L: LuaState, a: number, b: number): number;
  _lua_next(L: LuaState, index: number): number;
  _lua_pcallk(L: LuaState, nargs: number, nresults: number, errfunc: number, ctx: number, k: Pointer): number;
  _luaL_loadbufferx(L: LuaState, buffer: Pointer, size: number, name: Pointer, mode: Pointer): number;
  _luaL_ref(L: LuaState, t: number): number;
  _luaL_unref(L: LuaState, t: number, ref: number): void;
  _lua_sethook(L: LuaState, f: Pointer, mask: number, count: number): void;
}

/** LUAI_MAXSTACK = 1,000,000: the pseudo-index of the registry. */
export const LUA_REGISTRYINDEX = -1_000_000 - 1000;
export const LUA_MINSTACK = 20;

export const LUA_OK = 0;
export const LUA_ERRRUN = 2;
export const LUA_ERRSYNTAX = 3;
export const LUA_ERRMEM = 4;
export const LUA_ERRERR = 5;

export const LUA_TNIL = 0;
export const LUA_TBOOLEAN = 1;
export const LUA_TLIGHTUSERDATA = 2;
export const LUA_TNUMBER = 3;
export const LUA_TSTRING = 4;
export const LUA_TTABLE = 5;
export const LUA_TFUNCTION = 6;
export const LUA_TUSERDATA = 7;
export const LUA_TTHREAD = 8;

export const LUA_TYPE_NAMES = ['nil', 'boolean', 'userdata', 'number', 'string', 'table', 'function', 'userdata', 'thread'];

interface EmscriptenModule {
  HEAPU8: Uint8Array;
  HEAPU32: Uint32Array;
  addFunction(fn: (...args: number[]) => number, signature: string): Pointer;
  removeFunction(pointer: Pointer): void;
}

let loading: Promise<unknown> = Promise.resolve();

/** A fresh WebAssembly instance of Lua 5.4: its own memory, nothing shared with another. */
export function loadLuaModule(): Promise<RawLua> {
  const next = loading.then(instantiate);
  loading = next.catch(() => undefined);
  return next;
}

/** The part of the WebAssembly global used here (this project's TypeScript lib has no DOM types). */
interface WasmApi {
  instantiate: (...args: unknown[]) => Promise<unknown>;
}

async function instantiate(): Promise<RawLua> {
  const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
  const original = wasm.instantiate;
  let exports: Record<string, unknown> | undefined;
  wasm.instantiate = function (this: unknown, ...args: unknown[]): Promise<unknown> {
    return original.apply(this, args).then((value) => {
      // instantiate(bytes) resolves to {module, instance}; instantiate(module) to the instance.
      const instance = (value as { instance?: unknown }).instance ?? value;
      const found = (instance as { exports?: Record<string, unknown> }).exports;
      if (exports === undefined && typeof found?.lua_newstate === 'function') exports = found;
      return value;
    });
  };
  let module: EmscriptenModule;
  try {
    module = (await new LuaFactory().getLuaModule()).module as unknown as EmscriptenModule;
  } finally {
    wasm.instantiate = original;
  }
  // Without the instance (another wasmoon build), the Module's wrappers do the same, slower.
  const source = (exports ?? module) as unknown as Record<string, unknown>;
  const prefix = exports === undefined ? '_' : '';
  const raw: Record<string, unknown> = {
    get HEAPU8() { return module.HEAPU8; },
    get HEAPU32() { return module.HEAPU32; },
    addFunction: module.addFunction.bind(module),
    removeFunction: module.removeFunction.bind(module),
  };
  for (const name of RAW_FUNCTIONS) {
    const fn = source[prefix + name.slice(1)];
    if (typeof fn !== 'function') throw new Error(`the Lua module lacks ${name.slice(1)}`);
    raw[name] = fn;
  }
  return raw as unknown as RawLua;
}

/** RawLua's functions, by their Module names (the instance export is the name without the underscore). */
const RAW_FUNCTIONS = [
  '_malloc', '_free', '_realloc', '_lua_newstate', '_lua_close', '_luaL_openlibs', '_lua_gettop', '_lua_settop', '_lua_absindex',
  '_lua_checkstack', '_lua_pushvalue', '_lua_pushnil', '_lua_pushnumber', '_lua_pushinteger', '_lua_pushlstring', '_lua_pushboolean',
  '_lua_pushlightuserdata', '_lua_createtable', '_lua_rawset', '_lua_rawseti', '_lua_rawgeti', '_lua_setmetatable', '_lua_getmetatable',
  '_lua_type', '_lua_toboolean', '_lua_isinteger', '_lua_tonumberx', '_lua_tointegerx', '_lua_tolstring', '_lua_touserdata',
  '_lua_topointer', '_lua_rawequal', '_lua_next', '_lua_pcallk', '_luaL_loadbufferx', '_luaL_ref', '_luaL_unref', '_lua_sethook',
] as const;
