export { FIRST_TERM, isNewer, originOf, type Origin } from './origin.js';
export { INITIAL_REPLICATION_STATE, RECEIVED_AHEAD_MAX, ReplicaPosition, type ReplicationState } from './position.js';
export { REPLICATE_CHANGES_MAX, validateReplicatedChanges, validateTerm, type ReplicateOutcome, type ReplicatedChange, type ReplicatedContent } from './replicated-change.js';
export { TOMBSTONE_TTL_MS, Tombstones } from './tombstones.js';
