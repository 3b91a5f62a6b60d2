/**
 * Constants shared by every postings encoder, decoder and iterator.
 */

/**
 * The sentinel docid of an exhausted iterator (STYLE §8). It is the largest
 * positive int32, so `docid < target` comparisons stay in V8's small-integer
 * range and every real docid (≤ DOCID_MAX = 0x7ffffffe, store/keys.ts) sorts
 * before it.
 */
export const NO_MORE_DOCS = 0x7fffffff;

/**
 * Docs per postings block. 128 is what Lucene and Tantivy use: a block's
 * deltas bit-pack into whole 16-byte groups, and one skip entry per 128 docs
 * costs 1 bit per posting.
 */
export const BLOCK_SIZE = 128;
