/**
 * The constant part of every response head, prepared once: the status line
 * plus `Server:` per status (built on first use), and the `Date:` line,
 * rebuilt at most once per second by the server's clock tick rather than
 * formatted per response (`toUTCString()` costs more than the whole rest of
 * the head). The Date format is RFC 9110 IMF-fixdate.
 */
import { reasonPhrase } from '@tessera/errors';

/**
 * As Node's http: HTAB, visible ASCII and latin1 (the head is written as
 * latin1). A CR or LF in a value would split the response.
 */
const INVALID_HEADER_VALUE = /[\x00-\x08\x0a-\x1f\x7f\u0100-\uffff]/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export class ResponseHead {
  private readonly serverLine: string;
  private readonly statusLines: string[] = [];
  /** `Date: …\r\n`, current to the second. */
  dateLine = '';
  private dateSecond = -1;

  constructor(serverName: string) {
    this.serverLine = `Server: ${serverName}\r\n`;
    this.updateDate(Date.now());
  }

  /** `HTTP/1.1 <status> <reason>\r\nServer: …\r\n`. */
  statusLine(status: number): string {
    return this.statusLines[status] ??= `HTTP/1.1 ${status} ${reasonPhrase(status)}\r\n${this.serverLine}`;
  }

  updateDate(nowMs: number): void {
    const second = Math.floor(nowMs / 1000);
    if (second === this.dateSecond) return;
    this.dateSecond = second;
    this.dateLine = `Date: ${new Date(second * 1000).toUTCString()}\r\n`;
  }
}

/** Header names the server writes itself; a handler's values for them are ignored. */
function isServerHeader(name: string): boolean {
  switch (name.length) {
    case 4: return name.toLowerCase() === 'date';
    case 6: return name.toLowerCase() === 'server';
    case 10: {
      const lower = name.toLowerCase();
      return lower === 'connection' || lower === 'keep-alive';
    }
    case 14: return name.toLowerCase() === 'content-length';
    case 17: return name.toLowerCase() === 'transfer-encoding';
    default: return false;
  }
}

/**
 * `Name: ` by header name, for the names already checked: handlers use a
 * handful, so each is tested (token, server's own) once, not per response.
 * '' marks a name the server writes itself. Bounded: cleared when full.
 */
const NAME_PREFIXES = new Map<string, string>();
const NAME_PREFIXES_MAX = 256;

/** `Name: ` for a valid name, '' for a server header, null for a name that is not a token. */
function namePrefix(name: string): string | null {
  let prefix = NAME_PREFIXES.get(name);
  if (prefix === undefined) {
    if (isServerHeader(name)) prefix = '';
    else if (TOKEN.test(name)) prefix = `${name}: `;
    else return null;
    if (NAME_PREFIXES.size >= NAME_PREFIXES_MAX) NAME_PREFIXES.clear();
    NAME_PREFIXES.set(name, prefix);
  }
  return prefix;
}

/**
 * A handler's headers as `Name: value\r\n` lines, or null when a name is not
 * a token or a value holds a control character or one beyond latin1
 * (response splitting; the caller answers 500 instead).
 */
export function serializeHeaders(headers: Record<string, string | number>): string | null {
  let out = '';
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || value === null) continue;
    const prefix = namePrefix(name);
    if (prefix === null) return null;
    if (prefix === '') continue;
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return null;
    } else if (typeof value !== 'string' || INVALID_HEADER_VALUE.test(value)) {
      return null;
    }
    out += `${prefix}${value}\r\n`;
  }
  return out;
}
