/** Postings: block encoding, decoding iterators and the write buffer's growable lists. */
export { BLOCK_SIZE, NO_MORE_DOCS } from './constants.js';
export { ByteSink } from './byte-sink.js';
export { VarintReader, readUint32At, skipVarint } from './varint.js';
export { bitWidth, packBlock, unpackBlock } from './bitpack.js';
export { PostingsWriter, SKIP_ENTRY_BYTES, emptyTermPostingsInfo, type TermPostingsInfo } from './postings-writer.js';
export { PostingsIterator, type PostingsSource } from './postings-iterator.js';
export { TermPostings } from './term-postings.js';
export { MemoryPostingsIterator } from './memory-postings-iterator.js';
export { collectAll, type CollectedPosting, type DocIterator } from './collect-all.js';
