/** A shard copy's figures. */

export interface ShardStats {
  /** Live documents. */
  documents: number;
  /** Highest #docid ever assigned (0 when none). */
  lastDocid: number;
  /** Last sequence number assigned. */
  seq: number;
  /** Largest numeric document ID ever written (0 when none) — for POST ID generation. */
  maxNumericId: number;
}

/** Terms per live document, every field counted (Xapian's document length): INFO's av_length, doc_len_lower, doc_len_upper. */
export interface DocumentLengths {
  documents: number;
  sum: number;
  /** Smallest and largest (0 without documents). */
  lower: number;
  upper: number;
}
