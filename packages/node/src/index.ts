export { replayCommitLog, ShardNode, type ShardNodeOptions } from './shard-node.js';
export { shardDirectory } from './shard-paths.js';
export { PrimaryLease, PRIMARY_LEASE_DEFAULTS, PRIMARY_LEASE_MS_MAX, type PrimaryLeaseOptions } from './primary-lease.js';
export { ShardWorkerPool, type ShardWorkerPoolOptions } from './worker-pool.js';
export type { RelayPeers } from './direct-writes.js';
