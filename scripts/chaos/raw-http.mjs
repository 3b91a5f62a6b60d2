// Raw HTTP/1.1 on a socket, for the framing and smuggling cases (R9): bytes
// sent as given, whole or in fragments, and the responses read back.
import { connect } from 'node:net';

/**
 * The HTTP/1.1 responses in `text`, in order (Content-Length or chunked
 * framed), each { status, headers, body }; stops at the first incomplete one.
 */
export function parseResponses(text) {
  const out = [];
  let pos = 0;
  while (pos < text.length) {
    const end = text.indexOf('\r\n\r\n', pos);
    if (end === -1) break;
    const [statusLine, ...lines] = text.slice(pos, end).split('\r\n');
    const headers = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
    let body = '';
    let next = end + 4;
    if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
      for (;;) {
        const eol = text.indexOf('\r\n', next);
        if (eol === -1) return out;
        const size = parseInt(text.slice(next, eol), 16);
        if (Number.isNaN(size)) return out;
        if (size === 0) { next = text.indexOf('\r\n\r\n', eol) === eol ? eol + 4 : text.indexOf('\r\n\r\n', eol) + 4; break; }
        body += text.slice(eol + 2, eol + 2 + size);
        next = eol + 2 + size + 2;
      }
    } else {
      const length = Number(headers['content-length'] ?? 0);
      if (text.length < next + length) break;
      body = text.slice(next, next + length);
      next += length;
    }
    let json;
    try { json = JSON.parse(body); } catch { json = undefined; }
    out.push({ status, headers, body, json });
    pos = next;
  }
  return out;
}

/**
 * Send `bytes` (a latin1 string or a Buffer) on a fresh connection, whole or
 * in `fragments` (sizes of successive writes, one event-loop turn apart),
 * half-closing it after unless `keepOpen`; collect everything until the
 * server closes it or `timeoutMs` passes. Resolves with
 * { text, responses, error, closedByServer, ms }.
 */
export function rawExchange(port, bytes, { timeoutMs = 5000, keepOpen = false, fragments } = {}) {
  return new Promise((resolvePromise) => {
    const socket = connect(port, '127.0.0.1');
    const startedAt = Date.now();
    let text = '';
    let error = null;
    let closedByServer = true;
    const timer = setTimeout(() => { closedByServer = false; socket.destroy(); }, timeoutMs);
    socket.on('data', (d) => { text += d.toString('latin1'); });
    socket.on('error', (err) => { error = err.code ?? 'error'; });
    socket.on('close', () => {
      clearTimeout(timer);
      resolvePromise({ text, responses: parseResponses(text), error, closedByServer, ms: Date.now() - startedAt });
    });
    socket.on('connect', async () => {
      const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes, 'latin1');
      let at = 0;
      for (const size of fragments ?? []) {
        if (at >= buf.length || socket.destroyed) break;
        socket.write(buf.subarray(at, at + size));
        at += size;
        await new Promise((r) => setImmediate(r));
      }
      if (socket.destroyed) return;
      if (keepOpen) socket.write(buf.subarray(at));
      else socket.end(buf.subarray(at));
    });
  });
}
