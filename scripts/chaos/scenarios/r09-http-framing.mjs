// R9 — HTTP framing and request smuggling against the built `tessera serve`.
//
// Method: every case is a raw byte string sent on a fresh socket (node:net),
// whole and then cut into seeded random fragments (1–40 bytes per write, so
// every parser state meets a buffer boundary). Each case says the status and
// catalogue `code` of its first answer; framing errors must also end the
// connection (nothing after an unframeable request may be read as a request).
// Most cases carry, after or inside their body, a complete
// `PUT /smuggle/<case> HTTP/1.1` request: a smuggled request executed by the
// server would create that document, so after all cases every
// `GET /smuggle/<case>` must be 404 (figure: documents smuggled). The valid
// cases (identical duplicate Content-Length, chunk extensions, a request
// carried as the stored-content body, pipelining) must answer 200 and store
// exactly the bytes they framed. Limits are set small (--body-bytes-max,
// --content-body-bytes-max, --header-bytes-max, --url-bytes-max) so 413, 414
// and 431 are reached cheaply.
//
// quick: every case whole and in 1 fragmentation; full: whole and in 40.
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { random } from '../../bench/bench-lib.mjs';
import { request, SLOW_LOG_OFF, startServer } from '../lib.mjs';
import { rawExchange } from '../raw-http.mjs';

export const id = 'R9';
export const title = 'HTTP framing and smuggling: CL+TE, conflicting Content-Length, bad chunks, obs-fold, huge headers, pipelining';
export const target = '0 smuggled, every case its right status';

const BODY_MAX = 4096;
const HEADER_MAX = 4096;
const URL_MAX = 1024;

/** A complete request that, if ever executed, leaves /smuggle/<name> behind. */
const smuggled = (name) => `PUT /smuggle/${name} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{"smuggled":1}\n`;

/**
 * The cases: { name, bytes, status, code?, closes?, check? }. `status` the
 * first answer's; `closes`: the server must close the connection after it
 * (default: when status >= 400); `check(port, responses)` further checks
 * (resolves with an error string or null).
 */
function cases() {
  const list = [];
  const add = (c) => list.push(c);
  const put = (name, head, body) => `PUT /r9/${name} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n${head}\r\n${body}`;

  // Content-Length and Transfer-Encoding together (CL.TE and TE.CL), in every order and disguise.
  const chunkedSmuggle = (name) => `0\r\n\r\n${smuggled(name)}`;
  add({ name: 'cl-te', bytes: put('cl-te', `Content-Length: ${chunkedSmuggle('cl-te').length}\r\nTransfer-Encoding: chunked\r\n`, chunkedSmuggle('cl-te')), status: 400, code: 'http_conflicting_framing' });
  add({ name: 'te-cl', bytes: put('te-cl', `Transfer-Encoding: chunked\r\nContent-Length: 3\r\n`, chunkedSmuggle('te-cl')), status: 400, code: 'http_conflicting_framing' });
  add({ name: 'te-cl-zero', bytes: put('te-cl-zero', `Transfer-Encoding: chunked\r\nContent-Length: 0\r\n`, `${(smuggled('te-cl-zero').length).toString(16)}\r\n${smuggled('te-cl-zero')}\r\n0\r\n\r\n`), status: 400, code: 'http_conflicting_framing' });
  add({ name: 'te-case', bytes: put('te-case', `Content-Length: 5\r\nTRANSFER-ENCODING: Chunked\r\n`, chunkedSmuggle('te-case')), status: 400, code: 'http_conflicting_framing' });
  add({ name: 'te-space-before-colon', bytes: put('te-space-before-colon', `Content-Length: 5\r\nTransfer-Encoding : chunked\r\n`, chunkedSmuggle('te-space-before-colon')), status: 400, code: 'http_invalid_header' });
  add({ name: 'te-xchunked', bytes: put('te-xchunked', `Transfer-Encoding: xchunked\r\n`, chunkedSmuggle('te-xchunked')), status: 501, code: 'http_unsupported_transfer_coding' });
  add({ name: 'te-chunked-twice', bytes: put('te-chunked-twice', `Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n`, chunkedSmuggle('te-chunked-twice')), status: 400, code: 'http_chunked_not_final' });
  add({ name: 'te-chunked-identity', bytes: put('te-chunked-identity', `Transfer-Encoding: chunked, identity\r\n`, chunkedSmuggle('te-chunked-identity')), status: 400, code: 'http_chunked_not_final' });
  add({ name: 'te-gzip-chunked', bytes: put('te-gzip-chunked', `Transfer-Encoding: gzip, chunked\r\n`, chunkedSmuggle('te-gzip-chunked')), status: 501, code: 'http_unsupported_transfer_coding' });
  add({ name: 'te-empty', bytes: put('te-empty', `Transfer-Encoding: \r\n`, chunkedSmuggle('te-empty')), status: 400, code: 'http_invalid_header' });
  add({ name: 'te-http10', bytes: `PUT /r9/te-http10 HTTP/1.0\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunkedSmuggle('te-http10')}`, status: 411, code: 'http_length_required' });
  add({ name: 'te-obs-fold', bytes: put('te-obs-fold', `Content-Length: 5\r\nTransfer-Encoding:\r\n chunked\r\n`, chunkedSmuggle('te-obs-fold')), status: 400, code: 'http_invalid_header' });

  // Content-Length alone: duplicates, conflicts, non-digits.
  const json = '{"a":1}';
  add({ name: 'cl-conflict', bytes: put('cl-conflict', `Content-Length: ${json.length}\r\nContent-Length: ${json.length + smuggled('cl-conflict').length}\r\n`, json + smuggled('cl-conflict')), status: 400, code: 'http_conflicting_content_length' });
  add({ name: 'cl-list', bytes: put('cl-list', `Content-Length: ${json.length}, ${json.length}\r\n`, json + smuggled('cl-list')), status: 400, code: 'http_invalid_content_length' });
  for (const [suffix, value] of [['plus', `+${json.length}`], ['negative', '-1'], ['hex', '0x7'], ['space', '7 7'], ['empty', ''], ['letters', 'seven']]) {
    add({ name: `cl-${suffix}`, bytes: put(`cl-${suffix}`, `Content-Length: ${value}\r\n`, json + smuggled(`cl-${suffix}`)), status: 400, code: 'http_invalid_content_length' });
  }
  add({ name: 'cl-huge', bytes: put('cl-huge', 'Content-Length: 99999999999999999999999999\r\n', json + smuggled('cl-huge')), status: 413, code: 'http_body_too_large' });
  add({ name: 'cl-over-limit', bytes: put('cl-over-limit', `Content-Length: ${BODY_MAX + 1}\r\n`, json + smuggled('cl-over-limit')), status: 413, code: 'http_body_too_large' });
  add({
    name: 'cl-duplicate-identical', bytes: put('cl-duplicate-identical', `Content-Length: ${json.length}\r\nContent-Length: 0${json.length}\r\nConnection: close\r\n`, json), status: 200, closes: true,
    check: async (port) => ((await request(port, 'GET', '/r9/cl-duplicate-identical')).json?.a === 1 ? null : 'identical duplicate Content-Length: document not stored as framed'),
  });

  // Chunked bodies: bad sizes, extensions, missing CRLF, bare LF, oversize.
  const chunked = (name, body) => put(name, 'Transfer-Encoding: chunked\r\n', body);
  for (const [suffix, body] of [
    ['size-not-hex', `zz\r\n${json}\r\n0\r\n\r\n`],
    ['size-negative', `-7\r\n${json}\r\n0\r\n\r\n`],
    ['size-empty', `\r\n${json}\r\n0\r\n\r\n`],
    ['size-trailing', `7 7\r\n${json}\r\n0\r\n\r\n`],
    ['size-0x', `0x7\r\n${json}\r\n0\r\n\r\n`],
    ['ext-control', `7;a=\x01\r\n${json}\r\n0\r\n\r\n`],
    ['data-no-crlf', `3\r\n${json}\r\n0\r\n\r\n`],
    ['size-too-short', `1\r\n${json}\r\n0\r\n\r\n`],
  ]) {
    add({ name: `chunk-${suffix}`, bytes: chunked(`chunk-${suffix}`, body + smuggled(`chunk-${suffix}`)), status: 400, code: 'http_invalid_chunk' });
  }
  add({ name: 'chunk-bare-lf', bytes: chunked('chunk-bare-lf', `7\n${json}\r\n0\r\n\r\n${smuggled('chunk-bare-lf')}`), status: 400, code: 'http_invalid_line_ending' });
  add({ name: 'chunk-size-huge', bytes: chunked('chunk-size-huge', `fffffffffffffffffffffff\r\n${json}\r\n0\r\n\r\n${smuggled('chunk-size-huge')}`), status: 413, code: 'http_body_too_large' });
  add({ name: 'chunk-over-limit', bytes: chunked('chunk-over-limit', `${(BODY_MAX + 1).toString(16)}\r\n${json}\r\n0\r\n\r\n${smuggled('chunk-over-limit')}`), status: 413, code: 'http_body_too_large' });
  add({ name: 'chunk-line-too-long', bytes: chunked('chunk-line-too-long', `7;${'e'.repeat(5000)}\r\n${json}\r\n0\r\n\r\n${smuggled('chunk-line-too-long')}`), status: 400, code: 'http_invalid_chunk' });
  add({ name: 'chunk-trailer-fold', bytes: chunked('chunk-trailer-fold', `7\r\n${json}\r\n0\r\nX-T: a\r\n b\r\n\r\n${smuggled('chunk-trailer-fold')}`), status: 400, code: 'http_invalid_trailer' });
  add({
    name: 'chunk-extensions-valid', bytes: chunked('chunk-extensions-valid', `3;name=value;x\r\n{"a\r\n4 ; q="s"\r\n":1}\r\n0;last\r\nX-Trailer: ok\r\n\r\n`).replace('Host: t', 'Host: t\r\nConnection: close'), status: 200, closes: true,
    check: async (port) => ((await request(port, 'GET', '/r9/chunk-extensions-valid')).json?.a === 1 ? null : 'valid chunk extensions: document not stored as framed'),
  });

  // Header section: obs-fold, bad names, bare CR/LF, NUL, Host, size limits, version.
  const get = (head) => `GET /r9/none HTTP/1.1\r\n${head}\r\n${smuggled('x')}`;
  add({ name: 'obs-fold', bytes: get('Host: t\r\nX-A: a\r\n folded\r\n').replace(smuggled('x'), smuggled('obs-fold')), status: 400, code: 'http_invalid_header' });
  add({ name: 'header-space-in-name', bytes: get('Host: t\r\nBad Name: x\r\n').replace(smuggled('x'), smuggled('header-space-in-name')), status: 400, code: 'http_invalid_header' });
  add({ name: 'header-no-colon', bytes: get('Host: t\r\nNoColon\r\n').replace(smuggled('x'), smuggled('header-no-colon')), status: 400, code: 'http_invalid_header' });
  add({ name: 'header-nul', bytes: get('Host: t\r\nX-A: a\x00b\r\n').replace(smuggled('x'), smuggled('header-nul')), status: 400, code: 'http_invalid_header' });
  add({ name: 'bare-lf', bytes: `GET /r9/none HTTP/1.1\nHost: t\n\n${smuggled('bare-lf')}`, status: 400, code: 'http_invalid_line_ending' });
  add({ name: 'bare-cr', bytes: `GET /r9/none HTTP/1.1\r\nHost: t\rX-A: b\r\n\r\n${smuggled('bare-cr')}`, status: 400 });
  add({ name: 'host-missing', bytes: `GET /r9/none HTTP/1.1\r\nX-A: b\r\n\r\n${smuggled('host-missing')}`, status: 400, code: 'http_invalid_host' });
  add({ name: 'host-twice', bytes: get('Host: t\r\nHost: u\r\n').replace(smuggled('x'), smuggled('host-twice')), status: 400, code: 'http_invalid_host' });
  add({ name: 'headers-huge', bytes: get(`Host: t\r\nX-Big: ${'b'.repeat(HEADER_MAX * 2)}\r\n`).replace(smuggled('x'), smuggled('headers-huge')), status: 431, code: 'http_headers_too_large' });
  add({ name: 'headers-many', bytes: get(`Host: t\r\n${Array.from({ length: 600 }, (_, i) => `X-H${i}: v\r\n`).join('')}`).replace(smuggled('x'), smuggled('headers-many')), status: 431, code: 'http_headers_too_large' });
  add({ name: 'uri-huge', bytes: `GET /r9/${'u'.repeat(URL_MAX + 10)} HTTP/1.1\r\nHost: t\r\n\r\n${smuggled('uri-huge')}`, status: 414, code: 'http_uri_too_long' });
  add({ name: 'version-2', bytes: `GET /r9/none HTTP/2.0\r\nHost: t\r\n\r\n${smuggled('version-2')}`, status: 505, code: 'http_version_not_supported' });
  add({ name: 'version-garbage', bytes: `GET /r9/none HTTP/1.1x\r\nHost: t\r\n\r\n${smuggled('version-garbage')}`, status: 400, code: 'http_invalid_request_line' });
  add({ name: 'target-space', bytes: `GET /r9/a b HTTP/1.1\r\nHost: t\r\n\r\n${smuggled('target-space')}`, status: 400, code: 'http_invalid_request_line' });
  add({ name: 'method-lowercase', bytes: `put /smuggle/method-lowercase HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`, status: 400, code: 'http_method_case' });
  add({ name: 'expect-no-length', bytes: `PUT /r9/expect HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\n\r\n${smuggled('expect-no-length')}`, status: 411, code: 'http_length_required' });

  // A request carried as a body: framed by Content-Length (stored content) and by chunks; then pipelined requests.
  const carried = smuggled('in-body');
  add({
    name: 'request-in-cl-body',
    bytes: `PUT /r9/carrier-cl HTTP/1.1\r\nHost: t\r\nContent-Type: application/octet-stream\r\nContent-Length: ${carried.length}\r\n\r\n${carried}GET /r9/carrier-cl HTTP/1.1\r\nHost: t\r\nAccept: application/octet-stream\r\nConnection: close\r\n\r\n`,
    status: 200, closes: true, responses: 2,
    check: async (_port, responses) => (responses[1]?.status === 200 && responses[1].body === carried ? null : `request carried in a Content-Length body: second answer ${responses[1]?.status} ${JSON.stringify(responses[1]?.body?.slice(0, 60))}`),
  });
  const half = Math.floor(carried.length / 2);
  add({
    name: 'request-in-chunked-body',
    bytes: `PUT /r9/carrier-te HTTP/1.1\r\nHost: t\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n${half.toString(16)}\r\n${carried.slice(0, half)}\r\n${(carried.length - half).toString(16)}\r\n${carried.slice(half)}\r\n0\r\n\r\nGET /r9/carrier-te HTTP/1.1\r\nHost: t\r\nAccept: application/octet-stream\r\nConnection: close\r\n\r\n`,
    status: 200, closes: true, responses: 2,
    check: async (_port, responses) => (responses[1]?.status === 200 && responses[1].body === carried ? null : `request carried in a chunked body: second answer ${responses[1]?.status}`),
  });
  add({
    name: 'pipelined-valid',
    bytes: [1, 2, 3].map((n) => `PUT /r9/pipe-${n} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${JSON.stringify({ n }).length}\r\n\r\n${JSON.stringify({ n })}`).join('') + 'GET /r9/pipe-2 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n',
    status: 200, closes: true, responses: 4,
    check: async (_port, responses) => (responses.map((r) => r.status).join() === '200,200,200,200' && responses[3].json?.n === 2 ? null : `pipelined: answers ${responses.map((r) => r.status).join()}`),
  });
  add({
    name: 'pipelined-after-error',
    bytes: `GET /r9/pipe-1 HTTP/1.1\r\nHost: t\r\n\r\nGET /r9/none HTTP/1.1\r\nHost: t\r\nBad Header: x\r\n\r\n${smuggled('pipelined-after-error')}`,
    status: 200, closes: true, responses: 2,
    check: async (_port, responses) => (responses[1]?.status === 400 && responses.length === 2 ? null : `pipelined after an error: answers ${responses.map((r) => r.status).join()}`),
  });
  add({
    name: 'pipelined-after-413',
    bytes: `PUT /r9/big HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${BODY_MAX + 100}\r\n\r\n${'x'.repeat(40)}${smuggled('pipelined-after-413')}`,
    status: 413, code: 'http_body_too_large',
  });
  return list;
}

export async function run({ quick, seed, workDir, log }) {
  const next = random(seed);
  const dataDir = join(workDir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const server = await startServer({ dataDir, args: [...SLOW_LOG_OFF,
    '--body-bytes-max', String(BODY_MAX), '--content-body-bytes-max', String(BODY_MAX),
    '--header-bytes-max', String(HEADER_MAX), '--url-bytes-max', String(URL_MAX),
    '--headers-timeout-ms', '3000', '--idle-timeout-ms', '3000', '--shards', '1', '--replicas', '0',
  ] });
  const failures = [];
  let exchanges = 0;
  try {
    const all = cases();
    const rounds = quick ? 2 : 41;
    for (let round = 0; round < rounds; round++) {
      for (const c of all) {
        const total = Buffer.byteLength(c.bytes, 'latin1');
        const fragments = [];
        if (round === 0) fragments.push(total);
        else for (let sent = 0; sent < total;) { const n = 1 + Math.floor(next() * 40); fragments.push(n); sent += n; }
        // The socket stays open after the request: a server that waits for more bytes must be seen closing on its own.
        const got = await rawExchange(server.port, c.bytes, { fragments, keepOpen: true, timeoutMs: 4000 });
        exchanges++;
        const first = got.responses[0];
        const problems = [];
        if (first?.status !== c.status) problems.push(`status ${first?.status ?? `none (${got.error ?? 'no answer'})`}, expected ${c.status}`);
        if (c.code !== undefined && first?.json?.code !== c.code) problems.push(`code ${first?.json?.code}, expected ${c.code}`);
        if (first !== undefined && first.status >= 400 && (first.json?.status !== first.status || typeof first.json?.message !== 'string')) problems.push('error body is not API.md §4 JSON');
        if ((c.closes ?? c.status >= 400) && !got.closedByServer) problems.push('connection left open after the answer');
        if (c.responses !== undefined && got.responses.length !== c.responses) problems.push(`${got.responses.length} answers, expected ${c.responses}`);
        if (c.check) { const why = await c.check(server.port, got.responses); if (why) problems.push(why); }
        if (problems.length > 0) failures.push({ case: c.name, round, fragments: fragments.length, problems });
      }
      if (round === 0 || round % 10 === 0) log(`R9 round ${round + 1}/${rounds}: ${all.length} cases, ${failures.length} failures so far`);
    }
    // The smuggled requests: none may have been executed.
    const smuggledFound = [];
    for (const c of [...all.map((x) => x.name), 'x', 'in-body']) {
      const r = await request(server.port, 'GET', `/smuggle/${c}`);
      if (r.status !== 404) smuggledFound.push(`${c} (${r.status})`);
    }
    const alive = server.alive() && (await request(server.port, 'GET', '/r9/pipe-1')).status === 200;
    const pass = failures.length === 0 && smuggledFound.length === 0 && alive;
    for (const f of failures.slice(0, 20)) log(`R9 FAIL ${f.case} (round ${f.round}, ${f.fragments} fragments): ${f.problems.join('; ')}`);
    return {
      pass,
      figure: `${smuggledFound.length} smuggled; ${all.length - new Set(failures.map((f) => f.case)).size}/${all.length} cases their right status in ${exchanges} exchanges (${rounds - 1} random fragmentations each)${alive ? '' : '; server died'}`,
      details: { failures: failures.slice(0, 50), smuggledFound },
    };
  } finally {
    await server.stop();
  }
}
