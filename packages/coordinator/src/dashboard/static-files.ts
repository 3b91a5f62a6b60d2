/**
 * Serving a fixed set of files given as bytes (the web dashboard's bundle,
 * API.md §16.4): the coordinator never reads the file system per request, so
 * a path can only name one of the files it was given (no traversal, no
 * listing). Each file's type and ETag are computed once, at start; its gzip
 * form once, on the first request that accepts it (compressing the bundle
 * and its source map at level 9 took ~80 ms of every server's start).
 *
 * Caching: the page (`index`) is revalidated on every load (`no-cache` with
 * its ETag, 304 when unchanged); every other file is named by its content
 * (the bundler puts a hash in the name), so browsers keep it for a year.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { negotiateEncoding, ranksAboveSerializers, type HttpRequest, type HttpResponse } from '@tessera/http';
import mime from 'mime-types';

interface ServedFile {
  headers: Readonly<Record<string, string>>;
  body: Buffer;
  /** Worth compressing (a compressible type, not tiny). */
  compressible: boolean;
  /** The gzip form, once made. */
  gzip?: Buffer;
}

/** Smaller files are sent as they are: compression would save less than its header costs. */
const GZIP_BYTES_MIN = 1024;

/**
 * What the page may do: load its own scripts and styles, call this server's
 * API, nothing else (a hit's highlighted text is markup from the server;
 * even so, no script of another origin could run).
 */
const PAGE_POLICY = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; "
  + "frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

export class StaticFiles {
  private readonly files = new Map<string, ServedFile>();

  /** `files`: name (a path relative to the root, no leading `/`) → bytes; `index`: the page's name. */
  constructor(files: ReadonlyMap<string, Buffer>, private readonly index: string) {
    if (!files.has(index)) throw new Error(`the static files have no ${index}`);
    for (const [name, body] of files) {
      const type = mime.contentType(name.slice(name.lastIndexOf('/') + 1)) || 'application/octet-stream';
      const headers: Record<string, string> = {
        'Content-Type': type,
        ETag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
        'Cache-Control': name === index ? 'no-cache' : 'public, max-age=31536000, immutable',
        'X-Content-Type-Options': 'nosniff',
      };
      if (name === index) Object.assign(headers, { 'Content-Security-Policy': PAGE_POLICY, 'Referrer-Policy': 'no-referrer' });
      const compressible = /^(text\/|application\/(javascript|json)|image\/svg)/.test(type) && body.length >= GZIP_BYTES_MIN;
      this.files.set(name, { headers, body, compressible });
    }
  }

  /** The page. */
  page(req: HttpRequest): HttpResponse | undefined {
    return this.file(req, this.index);
  }

  /**
   * The file `name` (as it stands in the URL, never decoded: the names are
   * plain), or undefined when there is none of that name. Answers 304 to a
   * request whose `If-None-Match` holds the file's ETag.
   */
  file(req: HttpRequest, name: string): HttpResponse | undefined {
    const file = this.files.get(name);
    if (file === undefined) return undefined;
    const headers: Record<string, string> = { ...file.headers };
    if (file.compressible) headers.Vary = 'Accept-Encoding';
    if (matchesEtag(req.headers['if-none-match'], file.headers.ETag as string)) {
      delete headers['Content-Type'];
      return { status: 304, headers };
    }
    if (file.compressible && negotiateEncoding(req.headers['accept-encoding']) === 'gzip') {
      headers['Content-Encoding'] = 'gzip';
      file.gzip ??= gzipSync(file.body, { level: 9 });
      return { status: 200, headers, body: file.gzip };
    }
    return { status: 200, headers, body: file.body };
  }
}

/** RFC 9110 §13.1.2: `*`, or a list of entity tags compared weakly (a `W/` prefix ignored). */
function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** Whether `Accept` ranks HTML above every answer of the API (JSON, YAML, MessagePack): a browser opening a page, not an API client. */
export function prefersHtml(accept: string | undefined): boolean {
  return ranksAboveSerializers(accept, 'text/html');
}
