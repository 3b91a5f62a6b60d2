/**
 * Test support (not exported by the package): speak raw bytes to a server
 * over `node:net` and read back what it answers, including after malformed
 * input that no HTTP client library would send.
 */
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  /** Lower-cased names. */
  headers: Record<string, string>;
  body: Buffer;
}

export interface RawExchange {
  responses: RawResponse[];
  /** The server closed (or reset) the connection. */
  closed: boolean;
  /** Bytes after the last complete response (should be empty). */
  rest: Buffer;
  /** ms from the first write until the connection closed (or the exchange ended). */
  elapsedMs: number;
}

export interface RawOptions {
  /** Stop once this many final (non-1xx) responses are complete. Default: wait for close. */
  responses?: number;
  /** Give up after this long. Default 3000 ms. */
  timeoutMs?: number;
  /** Pause between pieces, ms (each piece is also flushed before the next). Default 0. */
  gapMs?: number;
  /** Half-close after the last piece. */
  end?: boolean;
  /** For each final response in order, whether it answers a HEAD request (no body). */
  headRequests?: boolean[];
}

/**
 * Parse complete responses from `buf`; returns them, the unparsed rest, and
 * the length `buf` must reach to complete the next response when its head is
 * already complete (`needs`), so that a reader can wait for that many bytes.
 */
export function parseResponses(buf: Buffer, headRequests: readonly boolean[] = [], finalSoFar = 0): { responses: RawResponse[]; rest: Buffer; needs?: number } {
  const responses: RawResponse[] = [];
  let off = 0;
  let finals = finalSoFar;
  for (;;) {
    const end = buf.indexOf('\r\n\r\n', off, 'latin1');
    if (end === -1) break;
    const lines = buf.toString('latin1', off, end).split('\r\n');
    const match = /^HTTP\/1\.[01] (\d{3}) /.exec(`${lines[0]!} `);
    if (match === null) throw new Error(`bad status line: ${JSON.stringify(lines[0])}`);
    const status = Number(match[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const isFinal = status >= 200;
    const hasBody = isFinal && status !== 204 && status !== 304 && headRequests[finals] !== true;
    const length = hasBody ? Number(headers['content-length'] ?? '0') : 0;
    if (end + 4 + length > buf.length) return { responses, rest: buf.subarray(off), needs: end + 4 + length };
    responses.push({ status, headers, body: buf.subarray(end + 4, end + 4 + length) });
    off = end + 4 + length;
    if (isFinal) finals++;
  }
  return { responses, rest: buf.subarray(off) };
}

export function rawExchange(port: number, pieces: readonly (string | Buffer)[], options: RawOptions = {}): Promise<RawExchange> {
  const timeoutMs = options.timeoutMs ?? 3000;
  return new Promise((resolve) => {
    const socket: Socket = connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    const received: Buffer[] = [];
    let receivedBytes = 0;
    // Bytes that complete the next response, when its head is known: a large body is not re-parsed per chunk.
    let needs = 0;
    const startedAt = Date.now();
    let settled = false;
    let closed = false;
    const finish = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const all = Buffer.concat(received);
      const { responses, rest } = parseResponses(all, options.headRequests);
      socket.destroy();
      resolve({ responses, closed, rest, elapsedMs: Date.now() - startedAt });
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on('error', () => {
      closed = true;
      finish();
    });
    socket.on('close', () => {
      closed = true;
      finish();
    });
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      receivedBytes += chunk.length;
      if (options.responses === undefined || receivedBytes < needs) return;
      const parsed = parseResponses(Buffer.concat(received), options.headRequests);
      needs = parsed.needs ?? 0;
      if (parsed.responses.filter((r) => r.status >= 200).length >= options.responses) finish();
    });
    socket.on('connect', () => {
      void (async () => {
        for (let i = 0; i < pieces.length; i++) {
          if (settled || socket.destroyed) return;
          await new Promise<void>((done) => socket.write(pieces[i]!, () => done()));
          if (options.gapMs !== undefined && options.gapMs > 0 && i < pieces.length - 1) {
            await new Promise((r) => setTimeout(r, options.gapMs));
          }
        }
        if (options.end === true && !socket.destroyed) socket.end();
      })();
    });
  });
}
