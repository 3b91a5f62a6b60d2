// Helpers the search benchmarks share (search.mjs, search-geo.mjs, search-fuzzy.mjs).
import { request as httpRequest } from 'node:http';

/** mulberry32: a small seeded generator, so every run draws the same queries. */
export function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * One request on `agent`'s keep-alive connection through node:http, the
 * answer's JSON parsed. Not undici: on this machine class undici added
 * 300–500 µs to every request with a body (SEARCH p50 835 µs vs 329 µs with
 * node:http against the same server), which would be measured as Tessera's time.
 */
export function httpCall(agent, port, method, path, body, contentType = 'application/json') {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    const req = httpRequest({
      agent, host: '127.0.0.1', port, method, path,
      headers: payload === undefined ? {} : { 'content-type': contentType, 'content-length': payload.length },
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode, value: text.length > 0 ? JSON.parse(text) : undefined });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}
