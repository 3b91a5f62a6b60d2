/**
 * Documents and parameters across the JS/Lua boundary, both ways, without
 * losing types (API.md §11.3): a safe integer becomes a Lua integer and comes
 * back as one, other numbers are floats; objects are tables (with the object
 * metatable of the legacy helpers), arrays are 1-based sequences (with the
 * array metatable, which also keeps an empty array an array); JSON null is the
 * `null` light userdata. Back from Lua, a table whose keys are exactly 1..n is
 * an array, any other table an object (integer keys become strings); an
 * object's fields keep the order they came in, with new fields after them,
 * sorted (Lua tables have no order). Functions, threads and non-finite numbers
 * have no document form: a ValueError naming the field.
 *
 * Strings cross as UTF-8 bytes through one scratch buffer in the module's
 * memory, copied by lua_pushlstring; reading one decodes the bytes Lua points
 * at. Short ASCII strings skip the TextEncoder/TextDecoder (measured: most keys).
 */
import {
  LUA_REGISTRYINDEX, LUA_TBOOLEAN, LUA_TLIGHTUSERDATA, LUA_TNIL, LUA_TNUMBER, LUA_TSTRING, LUA_TTABLE, LUA_TYPE_NAMES,
  type LuaState, type Pointer, type RawLua,
} from './lua-raw.js';

export interface ValueLimits {
  /** Deepest nesting of a document or parameter (API.md §13: 128). */
  depthMax: number;
  /** Most object keys and array items in one result. */
  fieldsMax: number;
}

/** A value with no form on the other side; `path` names where (`tags.2`). */
export class ValueError extends Error {
  readonly path: string[] = [];
  constructor(message: string) {
    super(message);
    this.name = 'ValueError';
  }

  where(): string {
    return this.path.length === 0 ? '_doc' : `_doc.${this.path.join('.')}`;
  }
}

const SHORT_STRING = 64;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** BigInt keys of the first array slots, made once (BigInt() allocates). */
const SMALL_INTEGERS: bigint[] = Array.from({ length: 1024 }, (_, i) => BigInt(i));
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function integerKey(i: number): bigint {
  return i < SMALL_INTEGERS.length ? (SMALL_INTEGERS[i] as bigint) : BigInt(i);
}

export class LuaValues {
  private scratch: Pointer;
  private scratchBytes: number;
  private readonly lengthSlot: Pointer;
  /** Field order of the objects pushed during this run, by table address (see resetRun). */
  private readonly pushedKeys = new Map<Pointer, string[]>();
  private fields = 0;

  constructor(
    private readonly raw: RawLua,
    private readonly L: LuaState,
    private readonly arrayMetatable: number,
    private readonly objectMetatable: number,
    private readonly limits: ValueLimits,
  ) {
    this.scratchBytes = 4096;
    this.scratch = raw._malloc(this.scratchBytes);
    this.lengthSlot = raw._malloc(4);
    if (this.scratch === 0 || this.lengthSlot === 0) throw new Error('no memory for the Lua scratch buffer');
  }

  /** Forget this run's objects: a table address may be reused by another table later. */
  resetRun(): void {
    if (this.pushedKeys.size > 0) this.pushedKeys.clear();
    this.fields = 0;
  }

  free(): void {
    this.raw._free(this.scratch);
    this.raw._free(this.lengthSlot);
  }

  /** `text` as UTF-8 in the scratch buffer: its address and byte length (valid until the next write). */
  write(text: string): { pointer: Pointer; bytes: number } {
    const n = text.length;
    if (n * 3 > this.scratchBytes) {
      const size = Math.max(n * 3, this.scratchBytes * 2);
      const next = this.raw._malloc(size);
      if (next === 0) throw new Error('no memory for the Lua scratch buffer');
      this.raw._free(this.scratch);
      this.scratch = next;
      this.scratchBytes = size;
    }
    const heap = this.raw.HEAPU8;
    const base = this.scratch;
    let i = 0;
    if (n <= SHORT_STRING) {
      for (; i < n; i++) {
        const c = text.charCodeAt(i);
        if (c > 0x7f) break;
        heap[base + i] = c;
      }
      if (i === n) return { pointer: base, bytes: n };
    }
    const rest = i === 0 ? text : text.slice(i);
    const written = encoder.encodeInto(rest, heap.subarray(base + i, base + this.scratchBytes)).written;
    return { pointer: base, bytes: i + written };
  }

  pushString(text: string): void {
    const { pointer, bytes } = this.write(text);
    this.raw._lua_pushlstring(this.L, pointer, bytes);
  }

  /** The string at `index` (which must be a Lua string: tolstring converts numbers in place). */
  readString(index: number): string {
    const raw = this.raw;
    const pointer = raw._lua_tolstring(this.L, index, this.lengthSlot);
    const length = raw.HEAPU32[this.lengthSlot >>> 2] as number;
    const heap = raw.HEAPU8;
    if (length <= SHORT_STRING) {
      let out = '';
      for (let i = 0; i < length; i++) {
        const c = heap[pointer + i] as number;
        if (c > 0x7f) return decoder.decode(heap.subarray(pointer, pointer + length));
        out += String.fromCharCode(c);
      }
      return out;
    }
    return decoder.decode(heap.subarray(pointer, pointer + length));
  }

  /** Push a document value (the caller has made room on the stack: depthMax * 3 + a few slots). */
  push(value: unknown, depth: number): void {
    const raw = this.raw;
    const L = this.L;
    switch (typeof value) {
      case 'string':
        this.pushString(value);
        return;
      case 'number':
        if (Number.isSafeInteger(value)) raw._lua_pushinteger(L, BigInt(value));
        else raw._lua_pushnumber(L, value);
        return;
      case 'boolean':
        raw._lua_pushboolean(L, value ? 1 : 0);
        return;
      case 'bigint':
        if (value >= INT64_MIN && value <= INT64_MAX) raw._lua_pushinteger(L, value);
        else raw._lua_pushnumber(L, Number(value));
        return;
      case 'undefined':
        raw._lua_pushnil(L);
        return;
      case 'object':
        if (value === null) {
          raw._lua_pushlightuserdata(L, 0);
          return;
        }
        if (depth > this.limits.depthMax) throw new ValueError(`nesting deeper than ${this.limits.depthMax} levels`);
        if (Array.isArray(value)) {
          this.pushArray(value, depth);
          return;
        }
        if (!ArrayBuffer.isView(value)) {
          this.pushObject(value as Record<string, unknown>, depth);
          return;
        }
        throw new ValueError('binary values have no Lua form');
      default:
        throw new ValueError(`a ${typeof value} has no Lua form`);
    }
  }

  private pushArray(items: readonly unknown[], depth: number): void {
    const raw = this.raw;
    const L = this.L;
    raw._lua_createtable(L, items.length, 0);
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      this.push(item === undefined ? null : item, depth + 1);
      raw._lua_rawseti(L, -2, integerKey(i + 1));
    }
    raw._lua_rawgeti(L, LUA_REGISTRYINDEX, integerKey(this.arrayMetatable));
    raw._lua_setmetatable(L, -2);
  }

  private pushObject(object: Record<string, unknown>, depth: number): void {
    const raw = this.raw;
    const L = this.L;
    const keys: string[] = [];
    for (const key of Object.keys(object)) if (object[key] !== undefined) keys.push(key);
    raw._lua_createtable(L, 0, keys.length);
    for (const key of keys) {
      this.pushString(key);
      this.push(object[key], depth + 1);
      raw._lua_rawset(L, -3);
    }
    raw._lua_rawgeti(L, LUA_REGISTRYINDEX, integerKey(this.objectMetatable));
    raw._lua_setmetatable(L, -2);
    this.pushedKeys.set(raw._lua_topointer(L, -1), keys);
  }

  /** The value at `index` (absolute) as a document value. */
  read(index: number, depth: number): unknown {
    const raw = this.raw;
    const L = this.L;
    const type = raw._lua_type(L, index);
    switch (type) {
      case LUA_TSTRING:
        return this.readString(index);
      case LUA_TNUMBER:
        if (raw._lua_isinteger(L, index) !== 0) return Number(raw._lua_tointegerx(L, index, 0));
        return this.readFloat(index);
      case LUA_TBOOLEAN:
        return raw._lua_toboolean(L, index) !== 0;
      case LUA_TLIGHTUSERDATA:
        if (raw._lua_touserdata(L, index) === 0) return null;
        break;
      case LUA_TTABLE:
        if (depth > this.limits.depthMax) throw new ValueError(`nesting deeper than ${this.limits.depthMax} levels (a table holding itself?)`);
        return this.readTable(index, depth);
      case LUA_TNIL:
        return null;
      default:
        break;
    }
    throw new ValueError(`a ${LUA_TYPE_NAMES[type] ?? 'value'} cannot be stored`);
  }

  private readFloat(index: number): number {
    const n = this.raw._lua_tonumberx(this.L, index, 0);
    if (!Number.isFinite(n)) throw new ValueError(`${String(n)} cannot be stored`);
    return n;
  }

  private readTable(index: number, depth: number): unknown {
    const raw = this.raw;
    const L = this.L;
    const keys: Array<string | number> = [];
    const values: unknown[] = [];
    let sequence = true;
    let largest = 0;
    raw._lua_pushnil(L);
    while (raw._lua_next(L, index) !== 0) {
      const keyType = raw._lua_type(L, -2);
      let key: string | number;
      if (keyType === LUA_TSTRING) {
        key = this.readString(-2);
        sequence = false;
      } else if (keyType === LUA_TNUMBER) {
        if (raw._lua_isinteger(L, -2) !== 0) {
          key = Number(raw._lua_tointegerx(L, -2, 0));
          if (key < 1) sequence = false;
          else if (key > largest) largest = key;
        } else {
          key = String(this.readFloat(-2));
          sequence = false;
        }
      } else {
        throw new ValueError(`a table key of type ${LUA_TYPE_NAMES[keyType] ?? 'unknown'} cannot be stored (keys are strings or integers)`);
      }
      if (++this.fields > this.limits.fieldsMax) throw new ValueError(`more than ${this.limits.fieldsMax} fields`);
      try {
        values.push(this.read(raw._lua_gettop(L), depth + 1));
      } catch (err) {
        if (err instanceof ValueError && err.path.length < 32) err.path.unshift(String(key));
        throw err;
      }
      keys.push(key);
      raw._lua_settop(L, -2);
    }
    const n = keys.length;
    if (n === 0) return this.hasArrayMetatable(index) ? [] : {};
    if (sequence && largest === n) {
      const out: unknown[] = new Array(n);
      for (let i = 0; i < n; i++) out[(keys[i] as number) - 1] = values[i];
      return out;
    }
    return this.object(index, keys, values);
  }

  /** An object from a table's entries: known fields first, in the order they came in; new ones after, sorted. */
  private object(index: number, keys: Array<string | number>, values: unknown[]): Record<string, unknown> {
    const byKey = new Map<string, unknown>();
    for (let i = 0; i < keys.length; i++) byKey.set(String(keys[i]), values[i]);
    const out: Record<string, unknown> = {};
    const order = this.pushedKeys.get(this.raw._lua_topointer(this.L, index));
    if (order !== undefined) {
      for (const key of order) {
        if (!byKey.has(key)) continue;
        setOwn(out, key, byKey.get(key));
        byKey.delete(key);
      }
    }
    if (byKey.size > 0) for (const key of [...byKey.keys()].sort()) setOwn(out, key, byKey.get(key));
    return out;
  }

  private hasArrayMetatable(index: number): boolean {
    const raw = this.raw;
    const L = this.L;
    if (raw._lua_getmetatable(L, index) === 0) return false;
    raw._lua_rawgeti(L, LUA_REGISTRYINDEX, integerKey(this.arrayMetatable));
    const same = raw._lua_rawequal(L, -1, -2) !== 0;
    raw._lua_settop(L, -3);
    return same;
  }
}

/** An own data property even for `__proto__` (a plain assignment would set the prototype). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
