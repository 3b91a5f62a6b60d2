/** Lua 5.4 scripts in writes (API.md §11), through wasmoon. */
export {};
