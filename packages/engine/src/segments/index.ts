/** Segments: the write buffer, immutable segments in LevelDB, flush, merge and the manifest. */
export { WriteBuffer, compareCodePoints, NO_TOKEN_POSITION, type IndexableDocument } from './write-buffer.js';
export { flushWriteBuffer } from './flush.js';
export { mergeSegments } from './merge.js';
export { SegmentReader } from './segment-reader.js';
export { SegmentWriter } from './segment-writer.js';
export { TermDictionary, TermDictionaryWriter, TermsIterator, DICTIONARY_BLOCK_TERMS } from './term-dictionary.js';
export { TieredMergePolicy, TIERED_MERGE_DEFAULTS, type MergeCandidate, type TieredMergePolicyOptions } from './merge-policy.js';
export {
  SegmentStore, readManifest, writeManifest, removeOrphanSegments, readSegmentBytes, writeSegmentChunks, chunkKey,
  PREFIX_MANIFEST, PREFIX_SEGMENT_CHUNKS, SEGMENT_CHUNK_BYTES, MANIFEST_FORMAT,
  type Manifest, type ManifestSegment, type SegmentDatabase,
} from './segment-store.js';
export { YieldBudget, SLICE_MS } from './yield-budget.js';
export { NORM_MAX, SEGMENT_FORMAT, type FieldStats, type SegmentHeader } from './segment-format.js';
