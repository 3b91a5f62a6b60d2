/**
 * Comma-separated header lists with `;name=value` parameters (RFC 9110 §5.6),
 * as used by Accept and Accept-Encoding. Commas and semicolons inside quoted
 * strings do not split. The input is one header value, already bounded by the
 * header-section limit (API.md §13), so the lists built here are bounded too.
 */

export interface HeaderElement {
  /** The element before its parameters, trimmed and lower-cased. */
  value: string;
  /** Parameters, names lower-cased, values unquoted (null prototype). */
  params: Record<string, string>;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

export function isToken(text: string): boolean {
  return TOKEN.test(text);
}

/**
 * The elements of a list; empty elements are skipped, and an element with a
 * malformed parameter (bad name, unterminated quote) is dropped.
 */
export function parseHeaderList(header: string): HeaderElement[] {
  const elements: HeaderElement[] = [];
  let parts: string[] = [];
  let part = '';
  let quoted = false;
  let broken = false;
  const finishElement = (): void => {
    parts.push(part);
    part = '';
    const element = broken ? undefined : toElement(parts);
    if (element !== undefined) elements.push(element);
    parts = [];
    broken = false;
  };
  for (let i = 0; i < header.length; i++) {
    const c = header[i] as string;
    if (quoted) {
      if (c === '\\' && i + 1 < header.length) {
        part += c + (header[i + 1] as string);
        i++;
      } else {
        if (c === '"') quoted = false;
        part += c;
      }
    } else if (c === '"') {
      quoted = true;
      part += c;
    } else if (c === ';') {
      parts.push(part);
      part = '';
    } else if (c === ',') {
      finishElement();
    } else {
      part += c;
    }
  }
  if (quoted) broken = true;
  finishElement();
  return elements;
}

function toElement(parts: string[]): HeaderElement | undefined {
  const value = (parts[0] as string).trim().toLowerCase();
  if (value === '') return undefined;
  const params: Record<string, string> = Object.create(null) as Record<string, string>;
  for (let i = 1; i < parts.length; i++) {
    const param = (parts[i] as string).trim();
    if (param === '') continue;
    const eq = param.indexOf('=');
    const name = (eq < 0 ? param : param.slice(0, eq)).trim().toLowerCase();
    if (!isToken(name)) return undefined;
    let paramValue = eq < 0 ? '' : param.slice(eq + 1).trim();
    if (paramValue.startsWith('"')) {
      if (paramValue.length < 2 || !paramValue.endsWith('"')) return undefined;
      paramValue = paramValue.slice(1, -1).replace(/\\(.)/g, '$1');
    }
    params[name] = paramValue;
  }
  return { value, params };
}

const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/** The `q` parameter (RFC 9110 §12.4.2): 1 when absent, undefined when malformed. */
export function qualityOf(params: Record<string, string>): number | undefined {
  const q = params['q'];
  if (q === undefined) return 1;
  return QVALUE.test(q) ? Number(q) : undefined;
}
