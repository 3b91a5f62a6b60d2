/**
 * @tessera/documents — the document model both sides of the shard protocol
 * share: a document's ID, body and content links, a write and its result, a
 * replicated change, a shard copy's figures. The engine stores and answers
 * these; rpc carries them between the coordinator and shard nodes. Types,
 * and the rule that tells media types apart: the engine knows nothing of RPC
 * or HTTP, and the coordinator never imports the engine, so what both need
 * lives here, below both (as the schema does).
 */
export { mediaTypeOf } from './media-type.js';
export { packMessagePack } from './msgpack-pack.js';
export { isPlainObject } from './plain-object.js';
export { compareCodePoints } from './code-points.js';
export { BucketHistogram, type HistogramSnapshot } from './histogram.js';
export { blobLength, blobParts, blobWhole, isBlobBytes, type BlobBytes } from './blob-bytes.js';
export type { ContentLink, DocumentBody, DocumentId } from './document.js';
export type { ContentWrite, WriteOp, WriteRequest, WriteResult, WriteScript } from './write.js';
export type { ReplicatedChange, ReplicatedContent } from './replicated-change.js';
export type { DocumentLengths, ShardStats } from './shard-stats.js';
