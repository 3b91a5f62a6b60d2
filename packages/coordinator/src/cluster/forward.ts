/**
 * A coordinator that is not elected serves reads and searches itself, runs
 * document writes up to their routed call (leader-link.ts), and forwards
 * every other request to the elected one over HTTP (coordinator-group.ts):
 * index, template, alias and key changes, RESTORE, COMMIT, and a document
 * write that needs a change of the cluster state (`leader_required`) run
 * where the cluster state and schema growth are decided.
 *
 * The request goes out as it came in (effective method, raw path and query,
 * end-to-end headers, the body or the RESTORE stream) over one keep-alive
 * pool per leader; the answer comes back as the leader gave it. A leader
 * that cannot be reached is a 503 `leader_unavailable`: a new one is
 * elected within the coordinators' lease.
 */
import { Readable } from 'node:stream';
import { TesseraError } from '@tessera/errors';
import type { HttpRequest, HttpResponse } from '@tessera/http';
import type { Pool } from 'undici';
import { apiErrors } from '../errors.js';

/** Methods a coordinator that is not elected answers itself: they change nothing. */
const SERVED_LOCALLY = new Set(['GET', 'HEAD', 'OPTIONS', 'SEARCH', 'COUNT', 'INFO', 'DUMP']);

/** Headers of one connection (RFC 9110 §7.6.1), and those the forwarder sets itself. */
const NOT_FORWARDED = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'content-length',
  'x-http-method-override',
]);

/** Set on a forwarded request: a coordinator never forwards it again (two that each think the other leads). */
export const FORWARDED_HEADER = 'x-tessera-forwarded-by';

export function servedLocally(method: string): boolean {
  return SERVED_LOCALLY.has(method);
}

export interface ForwardOptions {
  /** Longest wait for the leader's response head and between body chunks, ms. */
  timeoutMs: number;
  /** Certificates (PEM) an `https://` leader's certificate is verified against, instead of Node's default CAs. */
  ca?: Buffer;
}

export class Forwarder {
  private pool: { origin: string; pool: Pool } | undefined;

  constructor(private readonly name: string, private readonly options: ForwardOptions) {}

  /** Send `req` to the coordinator at `origin` (`http://host:port`) and answer with what it answers. */
  async forward(req: HttpRequest, origin: string): Promise<HttpResponse> {
    if (req.headers[FORWARDED_HEADER] !== undefined) {
      throw apiErrors.leaderUnavailable(`coordinator '${this.name}' is not elected either (forwarded by '${req.headers[FORWARDED_HEADER]}')`);
    }
    const headers: Record<string, string> = { [FORWARDED_HEADER]: this.name };
    for (const [name, value] of Object.entries(req.headers)) if (!NOT_FORWARDED.has(name)) headers[name] = value;
    try {
      const response = await (await this.poolFor(origin)).request({
        method: req.method,
        path: req.query === '' ? req.path : `${req.path}?${req.query}`,
        headers,
        body: req.bodyStream !== undefined ? Readable.from(req.bodyStream) : req.body.length > 0 ? req.body : null,
        headersTimeout: this.options.timeoutMs,
        bodyTimeout: this.options.timeoutMs,
      });
      const body = Buffer.from(await response.body.arrayBuffer());
      const out: Record<string, string> = {};
      for (const [name, value] of Object.entries(response.headers)) {
        if (value === undefined || NOT_FORWARDED.has(name)) continue;
        out[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      return { status: response.statusCode, headers: out, body: req.method === 'HEAD' ? null : body };
    } catch (err) {
      if (err instanceof TesseraError) throw err;
      throw apiErrors.leaderUnavailable(`the elected coordinator at ${origin} did not answer: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  async close(): Promise<void> {
    await this.pool?.pool.close();
    this.pool = undefined;
  }

  /** undici is loaded on the first forward: a coordinator alone never forwards, and the import costs every start. */
  private async poolFor(origin: string): Promise<Pool> {
    if (this.pool?.origin !== origin) {
      const { Pool: UndiciPool } = await import('undici');
      if (this.pool?.origin === origin) return this.pool.pool;
      void this.pool?.pool.close();
      const ca = this.options.ca;
      this.pool = { origin, pool: new UndiciPool(origin, { connections: 64, pipelining: 1, ...(ca === undefined ? {} : { connect: { ca } }) }) };
    }
    return this.pool.pool;
  }
}
