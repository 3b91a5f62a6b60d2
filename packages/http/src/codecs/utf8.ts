/**
 * Body bytes → text for the text codecs (JSON, NDJSON, YAML). Invalid UTF-8 is
 * refused rather than replaced with U+FFFD, so what is stored is what was sent.
 */
import { bodyMalformed } from './errors.js';

// fatal: invalid sequences throw; ignoreBOM false (default): a leading UTF-8 BOM is stripped.
// decode() without { stream: true } keeps no state between calls, so one instance serves all.
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

/** The body as a string, or undefined when it is not valid UTF-8. */
export function tryDecodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return utf8Decoder.decode(bytes);
  } catch {
    return undefined;
  }
}

/** The body as a string; 400 when it is not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array, what: string): string {
  const text = tryDecodeUtf8(bytes);
  if (text === undefined) throw bodyMalformed(what, 'invalid UTF-8');
  return text;
}
