/**
 * The byte layout of one immutable segment, written by SegmentWriter (flush
 * and merge) and read by SegmentReader:
 *
 *   "TSG1" | u32 LE header length | msgpack header | zero pad to 8 | sections
 *
 * Every section starts at a multiple of 8 bytes from the body start (itself
 * 8-aligned), so the reader views them in place as typed arrays. Sections:
 * docids (Uint32Array, ordinal → docid, ascending), the term dictionary
 * (term-dictionary.ts) and its block offsets (Uint32Array), postings and
 * positions (postings-writer.ts, each followed by 8 zero bytes for the
 * bit-unpacker's over-read), norms per field (Uint16Array by ordinal: the
 * field's length in tokens, saturated at 65,535), doc values per slot
 * (values/: Float64Array, Int32Array, Uint32Array CSR offsets, UTF-8
 * dictionary bytes). Norms and single-valued doc values that fewer than a
 * third of the docs have are sparse: the ordinals that have one (Uint32Array,
 * ascending, in `ordinals`) and their values in that order.
 */

export const SEGMENT_MAGIC = 0x31475354; // "TSG1" little-endian
export const SEGMENT_FORMAT = 1;
/**
 * A segment with sparse norms or doc values (an `ordinals` section): code
 * that knows only SEGMENT_FORMAT refuses it instead of reading them by
 * ordinal. Segments without one are written as SEGMENT_FORMAT, as before.
 */
export const SEGMENT_FORMAT_SPARSE = 2;
/** Zero bytes after the postings and positions sections: unpackBlock reads up to 5 bytes past a block. */
export const SEGMENT_TAIL_PAD_BYTES = 8;
/** Norms saturate here (Uint16). BM25 length normalisation is flat long before. */
export const NORM_MAX = 0xffff;

/** [byte offset from the body start, byte length]. */
export type Section = [number, number];

export interface FieldHeader {
  field: string;
  /** Documents with the field (length > 0). */
  docCount: number;
  /** Sum of the field's lengths (unsaturated). */
  sumLength: number;
  /** Uint16Array: the lengths by ordinal, or with `ordinals` the lengths of those ordinals. */
  norms: Section;
  /** Sparse norms: the ordinals with a length (Uint32Array, ascending). */
  ordinals?: Section;
}

export interface NumericHeader {
  slot: number;
  min: Section;
  /** Multi-valued slots only. */
  max?: Section;
  offsets?: Section;
  values?: Section;
  /** Sparse (single-valued slots only): the ordinals with a value, `min` their values. */
  ordinals?: Section;
}

export interface StringHeader {
  slot: number;
  dictionaryBytes: Section;
  dictionaryOffsets: Section;
  min: Section;
  max?: Section;
  offsets?: Section;
  ords?: Section;
  /** Sparse (single-valued slots only): the ordinals with a value, `min` their dictionary ordinals. */
  ordinals?: Section;
}

export interface SegmentHeader {
  format: number;
  docCount: number;
  termCount: number;
  docids: Section;
  dictionary: Section;
  dictionaryBlocks: Section;
  postings: Section;
  positions: Section;
  fields: FieldHeader[];
  numbers: NumericHeader[];
  strings: StringHeader[];
}

/** Per-field BM25 statistics. */
export interface FieldStats {
  docCount: number;
  sumLength: number;
}
