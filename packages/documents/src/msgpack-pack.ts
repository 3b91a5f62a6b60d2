/**
 * MessagePack encoding with msgpackr, for what the engine stores (store/
 * records.ts) and what the shard protocol sends (rpc ws/messages.ts):
 * standard maps (`useRecords: false`), read back by @msgpack/msgpack's
 * decoder, which both sides keep for its bounds on hostile input. As JSON
 * does, `undefined` fields are dropped and `undefined` array items are nil.
 * Integers beyond 32 bits are written as float64, read back as the same
 * number.
 *
 * Measured against @msgpack/msgpack's encoder: the Debian records 2.3×
 * faster (485 → 207 ms for 63,440 bodies); a shard's search reply of ten
 * hits with their JSON text (10 KB) 31.7 → 8.5 µs, a document write call
 * 6.6 → 3.4 µs, the same bytes. @msgpack/msgpack counts a string's UTF-8
 * bytes in a JavaScript loop before writing it; msgpackr writes it with
 * Buffer's native `utf8Write`.
 *
 * Results are slices of one growing buffer (msgpackr's, one per process,
 * shared by every Packr) and stay valid: later encodes write after them, or
 * into a new buffer. That buffer grows to the largest value it ever wrote:
 * after one past BUFFER_BYTES_KEEP it is replaced by a small fresh one
 * (measured: a 12 MB buffer kept for good after one 1 MB string).
 */
import { Packr } from 'msgpackr';

// `skipValues` and `writeFunction` are in msgpackr's code and README, not in its typings.
const encoder = new Packr({
  useRecords: false, skipValues: [undefined], encodeUndefinedAsNil: true,
  // A function is not data: refused (a write is then a 400), not sent or stored as nil.
  writeFunction: () => { throw new TypeError('a function cannot be stored or sent'); },
} as ConstructorParameters<typeof Packr>[0]);
const BUFFER_BYTES_KEEP = 1 << 20;
const BUFFER_BYTES_FRESH = 8192;

export function packMessagePack(value: unknown): Buffer {
  let bytes: Buffer | undefined;
  try {
    bytes = encoder.pack(value);
    return bytes;
  } finally {
    // The old buffer lives on only in the slices handed out. A pack that threw may have grown it too; one that did
    // not grows it to 4× its reservation (3 bytes per UTF-16 unit for a string): a 1 MB string made 12 MB.
    if (bytes === undefined || bytes.buffer.byteLength > BUFFER_BYTES_KEEP) encoder.useBuffer(Buffer.allocUnsafeSlow(BUFFER_BYTES_FRESH));
  }
}
