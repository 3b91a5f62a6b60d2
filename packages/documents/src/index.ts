/**
 * @tessera/documents — the document model both sides of the shard protocol
 * share: a document's ID, body and content links, a write and its result, a
 * replicated change, a shard copy's figures. The engine stores and answers
 * these; rpc carries them between the coordinator and shard nodes. Types
 * only: the engine knows nothing of RPC, and the coordinator never imports
 * the engine, so the shapes both need live here, below both (as the schema
 * does).
 */
export type { ContentLink, DocumentBody, DocumentId } from './document.js';
export type { ContentWrite, WriteOp, WriteRequest, WriteResult, WriteScript } from './write.js';
export type { ReplicatedChange, ReplicatedContent } from './replicated-change.js';
export type { DocumentLengths, ShardStats } from './shard-stats.js';
