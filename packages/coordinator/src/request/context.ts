/** Everything a handler needs to know about one request, parsed once. */
import { decodeBody, expandDottedFields, type DecodeLimits, type HttpRequest } from '@tessera/http';
import { apiErrors } from '../errors.js';
import { isPlainObject } from '@tessera/schema';
import { commonOptions, QueryParams, type CommonOptions } from './params.js';
import type { ParsedPath } from './path.js';

export class RequestContext {
  readonly params: QueryParams;
  readonly options: Readonly<CommonOptions>;
  /**
   * On a coordinator that is not elected: the cluster state's etcd revision
   * this request was routed from (its aliases resolved, its index read), which
   * a document write's routed call carries (cluster/leader-link.ts).
   */
  routedAt: number | undefined;

  constructor(readonly req: HttpRequest, readonly path: ParsedPath, private readonly limits: DecodeLimits) {
    this.params = new QueryParams(req.query);
    this.options = commonOptions(this.params);
  }

  get method(): string {
    return this.req.method;
  }

  /** The index of a single-index API (400 for a list). */
  singleIndex(): string {
    if (this.path.indexes.length === 0) throw apiErrors.badPath('A document path needs an index: /<index>/<id>');
    if (this.path.indexes.length !== 1) throw apiErrors.singleIndexOnly();
    return this.path.indexes[0] as string;
  }

  /** The body as a structured value (415 for opaque bytes), dotted fields expanded. */
  value(): unknown {
    const decoded = decodeBody(this.req.body, this.req.headers['content-type'], this.limits);
    if (decoded.kind === 'opaque') throw apiErrors.unsupportedMediaType(decoded.mediaType);
    return expandDottedFields(decoded.value);
  }

  /** The body as an object (400 otherwise). */
  object(what: string): Record<string, unknown> {
    const value = this.value();
    if (!isPlainObject(value)) throw apiErrors.badBody(`${what} must be an object`);
    return value;
  }
}
