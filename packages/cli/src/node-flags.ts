/**
 * Node (V8) flags the long-running server processes (`serve`, `coordinator`,
 * `node`) are started with: `npm start`, the Dockerfile, scripts/cluster and
 * the benchmarks pass these, so what is measured is what runs.
 *
 * `--max-semi-space-size=16` (MiB): a young generation of up to 32 MiB,
 * pinned (V8 otherwise sizes it from the machine's memory). It was 32 while
 * text analysis ran on the event loop, whose scavenges copied each batch's
 * terms again (Debian corpus through RESTORE: 1.86 s of scavenges at 16 MiB,
 * 0.61 s at 64 MiB). With analysis on its own thread the server's CPU time
 * for that load did not grow at 16 (medians of 3 alternating runs: 15.6 s at
 * 16, 17.7 s at 32) and its peak RSS fell by 30 MB (issue 24). V8 reads the
 * flag when the heap is set up, so it cannot be set from inside the process
 * (`v8.setFlagsFromString` is too late); the engine's own threads get a
 * smaller young generation of their own (engine idle-thread.ts).
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=16'];

/**
 * V8 flags the server processes set from inside (program.ts, before they
 * start), since V8 reads them at each full collection: no launcher needs them.
 *
 * `--heap-growing-percent=100`: after a full collection V8 lets the old
 * generation grow to twice what survived before the next one, instead of up
 * to four times when collections are cheap — which they are on a server's
 * heap. Large request bodies (yaml's syntax tree of a 10,000-field YAML body:
 * ~8 MB, built over several scavenges) are promoted and die there, and under
 * the hostile fuzz of issue 18 old space sat at 90-120 MB over a live 30 MB
 * (YAML phase, 3,000 cases: peak RSS 312.5 MB); at twice, 48 MB and a peak of
 * 253.9 MB. A full collection of a live heap that size takes milliseconds and
 * V8 marks incrementally.
 */
export const SERVER_RUNTIME_V8_FLAGS: readonly string[] = ['--heap-growing-percent=100'];

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
