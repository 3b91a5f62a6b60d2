/** Postings: block encoding, decoding iterators and the write buffer's pooled postings. */
export { BLOCK_SIZE, NO_MORE_DOCS } from './constants.js';
export { ByteSink } from './byte-sink.js';
export { VarintReader, readUint32At, skipVarint } from './varint.js';
export { bitWidth, packBlock, unpackBlock } from './bitpack.js';
export { PostingsWriter, SKIP_ENTRY_BYTES, emptyTermPostingsInfo, type TermPostingsInfo } from './postings-writer.js';
export { PostingsIterator, type PostingsSource } from './postings-iterator.js';
export { BufferedPostings, DecodedTerm, PostingsCursor } from './buffered-postings.js';
export { ByteSlicePool, SliceReader, SliceStreams, SLICE_SIZES } from './byte-slice-pool.js';
export { MemoryPostingsIterator } from './memory-postings-iterator.js';
export { collectAll, type CollectedPosting, type DocIterator } from './collect-all.js';
export { postingsCache, PostingsCache, POSTINGS_CACHE_BYTES_DEFAULT, POSTINGS_CACHE_DF_MIN, type DecodedPostings } from './postings-cache.js';
