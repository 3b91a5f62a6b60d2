/**
 * Node (V8) flags the long-running server processes (`serve`, `coordinator`,
 * `node`) are started with: `npm start`, docker-compose, scripts/cluster and
 * the benchmarks pass these, so what is measured is what runs.
 *
 * `--max-semi-space-size=64` (MiB; Node's default is 16): bulk indexing keeps
 * a batch of documents, their terms and their records alive across many
 * allocations, and every scavenge of a small young generation copies them
 * again. On the Debian corpus (63,440 documents through RESTORE) scavenges
 * took 1.86 s at 16 MiB and 0.61 s at 64 MiB (`--trace-gc`), for up to
 * ~100 MiB more resident memory. V8 reads the flag when the heap is set up,
 * so it cannot be set from inside the process (`v8.setFlagsFromString` is too late).
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];
