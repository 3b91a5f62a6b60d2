export { ShardNode, type ShardNodeOptions } from './shard-node.js';
export { shardDirectory } from './shard-paths.js';
