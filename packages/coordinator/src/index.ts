export { Coordinator, type CoordinatorOptions } from './coordinator.js';
export { NodeDirectory, allocateShards, type NodeEntry } from './cluster/nodes.js';
export type { ClusterIdentity } from './cluster/info.js';
export type { IndexSettings } from './indexes/settings.js';
export { parsePath, INDEX_PATH_BYTES_MAX, DOCUMENT_ID_BYTES_MAX } from './request/path.js';
export { apiErrors } from './errors.js';
