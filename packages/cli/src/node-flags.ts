/**
 * Node (V8) flags the long-running server processes (`serve`, `coordinator`,
 * `node`) are started with: `npm start`, the Dockerfile, scripts/cluster and
 * the benchmarks pass these, so what is measured is what runs.
 *
 * `--max-semi-space-size=32` (MiB; Node's default is 16): bulk indexing keeps
 * a batch of documents, their terms and their records alive across many
 * allocations, and every scavenge of a small young generation copies them
 * again. On the Debian corpus (63,440 documents through RESTORE) scavenges
 * took 1.86 s at 16 MiB and 0.61 s at 64 MiB (`--trace-gc`); but 64 MiB
 * semi-spaces keep up to 128 MiB of young generation resident in a burst
 * (issue 18's hostile fuzz: peak 487 MB at 64, 433 MB at 32). V8 reads the flag when the heap is set up,
 * so it cannot be set from inside the process (`v8.setFlagsFromString` is too late).
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32'];

/**
 * Environment the server processes are started with, for glibc's malloc
 * (it reads these once, at the first allocation: too late from inside the
 * process). Measured with scripts/reliability/fuzz-bodies.mjs (400 hostile
 * bodies per codec, then a full GC; /proc/PID/smaps): without them 122 MB of
 * RSS sat in glibc's per-thread arenas (libuv, LevelDB and worker threads
 * each get one, up to 8 per core) and large request-body buffers, once freed,
 * raised malloc's mmap threshold so later ones came from, and stayed in, the
 * heap; with them the arenas held 9 MB and RSS growth fell from ~240 to
 * ~175 MB. `MALLOC_ARENA_MAX=2`: two arenas; `MALLOC_MMAP_THRESHOLD_` fixed
 * at glibc's initial 128 KiB (setting it turns the dynamic threshold off),
 * so a large buffer is unmapped when freed; `MALLOC_TRIM_THRESHOLD_` the
 * same, so free memory at the top of the heap goes back. Other C libraries
 * ignore them.
 */
export const SERVER_ENV: Readonly<Record<string, string>> = Object.freeze({
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '131072',
  MALLOC_TRIM_THRESHOLD_: '131072',
});
