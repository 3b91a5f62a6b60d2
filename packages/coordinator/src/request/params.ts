/**
 * Query parameters of API.md §2.1. Flags take no value or
 * true|t|1|yes|on / false|f|0|no|off; integers are unsigned decimals; anything
 * else is a 400. Unknown parameters are ignored (clients send `commit`,
 * `volatile`, `echo` on every request).
 */
import { apiErrors } from '../errors.js';

const TRUE = new Set(['', 'true', 't', '1', 'yes', 'on']);
const FALSE = new Set(['false', 'f', '0', 'no', 'off']);

/** No query at all (most GETs): nothing to parse, every lookup absent. */
const NO_PARAMS = new URLSearchParams();

export class QueryParams {
  private readonly params: URLSearchParams;
  /** The query string was empty. */
  readonly empty: boolean;

  constructor(rawQuery: string) {
    this.empty = rawQuery.length === 0;
    this.params = this.empty ? NO_PARAMS : new URLSearchParams(rawQuery);
  }

  has(name: string): boolean {
    return this.params.has(name);
  }

  flag(name: string, defaultValue: boolean): boolean {
    const raw = this.params.get(name);
    if (raw === null) return defaultValue;
    const v = raw.toLowerCase();
    if (TRUE.has(v)) return true;
    if (FALSE.has(v)) return false;
    throw apiErrors.badParam(name, raw, 'a flag (true/false)');
  }

  unsigned(name: string): number | undefined {
    const raw = this.params.get(name);
    if (raw === null) return undefined;
    if (!/^\d{1,15}$/.test(raw)) throw apiErrors.badParam(name, raw, 'an unsigned integer');
    return Number(raw);
  }

  string(name: string): string | undefined {
    return this.params.get(name) ?? undefined;
  }

  all(name: string): string[] {
    return this.params.getAll(name);
  }
}

/** The options every request carries (API.md §2.1). */
export interface CommonOptions {
  pretty: boolean | undefined;
  echo: boolean;
  comments: boolean;
  human: boolean;
  commit: boolean;
  selector: string | undefined;
}

/** The options of a request without a query string: shared, so frozen. */
const DEFAULT_OPTIONS: Readonly<CommonOptions> = Object.freeze({
  pretty: undefined, echo: true, comments: true, human: true, commit: false, selector: undefined,
});

export function commonOptions(params: QueryParams): Readonly<CommonOptions> {
  if (params.empty) return DEFAULT_OPTIONS;
  return {
    pretty: params.has('pretty') ? params.flag('pretty', true) : undefined,
    echo: params.flag('echo', true),
    comments: params.flag('comments', true),
    human: params.flag('human', true),
    commit: params.flag('commit', false),
    selector: params.string('selector'),
  };
}
