/**
 * `tessera dump`: every document of an index of a running server, as NDJSON,
 * through DUMP (API.md §7.6) — the file `tessera import` loads back into the
 * same documents (see coordinator/src/bulk/dump.ts for what an item holds).
 * The response is written as it arrives (backpressure from the file to the
 * server's shard pages); a file is written under a temporary name and renamed
 * only once the dump is complete, so a cut dump never looks like a whole one.
 */
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { request } from 'undici';
import { authHeaders, authHint } from './client-auth.js';
import { mebibytes } from './progress.js';

export interface DumpOptions {
  index: string;
  url: string;
  /** A file (gzipped when it ends in `.gz`), or `-` for standard output. */
  output: string;
  /** Sent as `Authorization: Bearer` (client-auth.ts). */
  apiKey?: string | undefined;
}

export interface DumpSummary {
  documents: number;
  bytes: number;
  seconds: number;
}

export async function runDump(options: DumpOptions): Promise<DumpSummary> {
  const startedAt = process.hrtime.bigint();
  const segments = options.index.split('/').filter((s) => s.length > 0);
  if (segments.length === 0) throw new Error(`--index ${JSON.stringify(options.index)} names no index: give a path such as /debian/`);
  const indexPath = `/${segments.map(encodeURIComponent).join('/')}/`;
  let res: Awaited<ReturnType<typeof request>>;
  try {
    res = await request(new URL(indexPath, options.url), { method: 'DUMP' as 'GET', headers: { accept: 'application/x-ndjson, application/json;q=0.5', ...authHeaders(options.apiKey) } });
  } catch (err) {
    throw new Error(`cannot reach the server at ${options.url}: ${(err as Error).message} (is \`tessera serve\` running there?)`);
  }
  if (res.statusCode !== 200) {
    const text = await res.body.text();
    let message = `HTTP ${res.statusCode}`;
    try {
      message = (JSON.parse(text) as { message?: string }).message ?? message;
    } catch {
      // Not an API error body.
    }
    throw new Error(`DUMP ${indexPath} failed: ${message}${authHint(res.statusCode, options.apiKey)}`);
  }
  let documents = 0;
  let bytes = 0;
  // Counts lines (one document each) and bytes as they pass.
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      for (let i = chunk.indexOf(0x0a); i >= 0; i = chunk.indexOf(0x0a, i + 1)) documents++;
      done(null, chunk);
    },
  });
  const toStdout = options.output === '-';
  const temporary = `${options.output}.partial-${process.pid}`;
  const sink: Writable = toStdout ? process.stdout : createWriteStream(temporary);
  try {
    if (options.output.toLowerCase().endsWith('.gz')) await pipeline(res.body, counter, createGzip(), sink);
    else await pipeline(res.body, counter, sink);
    if (!toStdout) await rename(temporary, options.output);
  } catch (err) {
    if (!toStdout) await rm(temporary, { force: true });
    throw new Error(`DUMP ${indexPath} was cut short after ${documents} documents: ${(err as Error).message}`);
  }
  const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
  process.stderr.write(`dumped ${documents} documents from ${indexPath} to ${toStdout ? 'standard output' : options.output} `
    + `(${mebibytes(bytes)} of NDJSON) in ${seconds.toFixed(1)} s\n`);
  return { documents, bytes, seconds };
}
