/**
 * EWKT text (API.md §8.6), Xapiand's geometries: `POINT(lon lat [h])`,
 * `CIRCLE(lon lat [h], r)`, `CONVEX((lon lat, r), …)` (intersection of
 * circles), `POLYGON((lon lat, …), …)` (convex rings, exclusive-or'ed),
 * `CHULL((…), …)` (hulls), `MULTIPOINT(lon lat, …)` or `MULTIPOINT((lon lat),
 * …)`, `MULTICIRCLE((…, r), …)`, `MULTICONVEX(((…, r), …), …)`,
 * `MULTIPOLYGON(((…), …), …)`, `MULTICHULL(…)`, `GEOMETRYCOLLECTION(g, …)`,
 * any of them `EMPTY`; an optional `SRID=4326;` prefix (the only datum: the
 * sphere of §8.6). Keywords in any case; longitude first; radii in metres or
 * with a unit (`2.72km`).
 *
 * `formatEwkt` writes the canonical text of a geometry: upper-case keywords,
 * single spaces, numbers in JavaScript's shortest round-trip form, radii in
 * metres. Parsing it back gives the same geometry.
 */
import { convexRing } from './convex.js';
import { geoErrors } from './errors.js';
import {
  type GeoCircle, type GeoPoint, type Geometry, GEOMETRY_DEPTH_MAX, makePoint, PointBudget,
} from './geometry.js';
import { parseDistance } from './units.js';

const SRID_WGS84 = 4326;
const NUMBER_RE = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const KEYWORDS: ReadonlySet<string> = new Set([
  'POINT', 'CIRCLE', 'CONVEX', 'POLYGON', 'CHULL', 'MULTIPOINT', 'MULTICIRCLE', 'MULTICONVEX', 'MULTIPOLYGON',
  'MULTICHULL', 'GEOMETRYCOLLECTION',
]);
const LEADING_KEYWORD_RE = /^\s*(?:SRID\s*=\s*\d+\s*;\s*)?([A-Za-z]+)\s*(?:\(|EMPTY\s*$)/i;

type Token = { readonly kind: '(' | ')' | ','; readonly at: number } | { readonly kind: 'word'; readonly text: string; readonly at: number };

/** Whether `s` starts like EWKT (an optional SRID, then a known keyword and `(` or `EMPTY`): the cheap test before parsing. */
export function looksLikeEwkt(s: string): boolean {
  const m = LEADING_KEYWORD_RE.exec(s);
  return m !== null && KEYWORDS.has(m[1]!.toUpperCase());
}

/** Parse EWKT text into a geometry; 400 `invalid_geo` naming what was expected where. */
export function parseEwkt(text: string): Geometry {
  let body = text;
  const srid = /^\s*SRID\s*=\s*([^;]*);/i.exec(text);
  if (srid !== null) {
    const code = srid[1]!.trim();
    if (!/^\d+$/.test(code)) throw geoErrors.invalid(`Invalid SRID '${code.slice(0, 20)}' in EWKT`);
    if (Number(code) !== SRID_WGS84) throw geoErrors.invalid(`SRID=${code.slice(0, 20)} is not supported: only 4326`);
    body = text.slice(srid[0].length);
  }
  const parser = new EwktParser(tokenize(body), text);
  const g = parser.geometry(0);
  parser.end();
  return g;
}

function tokenize(s: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < s.length) {
    const ch = s[i]!;
    if (ch === '(' || ch === ')' || ch === ',') {
      tokens.push({ kind: ch, at: i });
      i++;
    } else if (/\s/.test(ch)) {
      i++;
    } else {
      const start = i;
      while (i < s.length && !/[\s(),]/.test(s[i]!)) i++;
      tokens.push({ kind: 'word', text: s.slice(start, i), at: start });
    }
  }
  return tokens;
}

class EwktParser {
  private i = 0;
  private readonly budget = new PointBudget();

  constructor(private readonly tokens: readonly Token[], private readonly text: string) {}

  private fail(expected: string): never {
    const t = this.tokens[this.i];
    const where = t === undefined ? 'at the end' : `at ${t.at}`;
    throw geoErrors.invalid(`Invalid EWKT ${JSON.stringify(this.text.slice(0, 100))}: expected ${expected} ${where}`);
  }

  private peek(kind: Token['kind']): boolean {
    return this.tokens[this.i]?.kind === kind;
  }

  private expect(kind: '(' | ')' | ','): void {
    if (!this.peek(kind)) this.fail(`'${kind}'`);
    this.i++;
  }

  private word(expected: string): string {
    const t = this.tokens[this.i];
    if (t === undefined || t.kind !== 'word') this.fail(expected);
    this.i++;
    return t.text;
  }

  end(): void {
    if (this.i !== this.tokens.length) this.fail('the end of the text');
  }

  /** `(` item (`,` item)* `)` */
  private list<T>(item: () => T): T[] {
    this.expect('(');
    const out = [item()];
    while (this.peek(',')) {
      this.i++;
      out.push(item());
    }
    this.expect(')');
    return out;
  }

  geometry(depth: number): Geometry {
    if (depth > GEOMETRY_DEPTH_MAX) this.fail(`at most ${GEOMETRY_DEPTH_MAX} nested collections`);
    const keyword = this.word('a geometry (POINT, CIRCLE, CONVEX, POLYGON, CHULL, MULTI…, GEOMETRYCOLLECTION)').toUpperCase();
    if (!KEYWORDS.has(keyword)) {
      this.i--;
      this.fail('a geometry (POINT, CIRCLE, CONVEX, POLYGON, CHULL, MULTI…, GEOMETRYCOLLECTION)');
    }
    const next = this.tokens[this.i];
    if (next !== undefined && next.kind === 'word' && next.text.toUpperCase() === 'EMPTY') {
      this.i++;
      return { kind: 'collection', geometries: [] };
    }
    switch (keyword) {
      case 'POINT': {
        this.expect('(');
        const point = this.coordinates();
        this.expect(')');
        return { kind: 'point', point };
      }
      case 'CIRCLE': {
        this.expect('(');
        const circle = this.circleBody();
        this.expect(')');
        return { kind: 'circle', circle };
      }
      case 'CONVEX':
        return { kind: 'convex', circles: this.circles() };
      case 'POLYGON':
      case 'CHULL':
        return { kind: 'polygon', rings: this.rings(keyword === 'CHULL') };
      case 'MULTIPOINT':
        return { kind: 'multipoint', points: this.list(() => this.multipointItem()) };
      case 'MULTICIRCLE':
        return { kind: 'multicircle', circles: this.circles() };
      case 'MULTICONVEX':
        return { kind: 'multiconvex', convexes: this.list(() => this.circles()) };
      case 'MULTIPOLYGON':
      case 'MULTICHULL':
        return { kind: 'multipolygon', polygons: this.list(() => this.rings(keyword === 'MULTICHULL')) };
      default:
        return { kind: 'collection', geometries: this.list(() => this.geometry(depth + 1)) };
    }
  }

  /** `lon lat [height]` */
  private coordinates(): GeoPoint {
    const lon = this.number('a longitude');
    const lat = this.number('a latitude');
    const t = this.tokens[this.i];
    const height = t !== undefined && t.kind === 'word' ? this.number('a height') : undefined;
    this.budget.take();
    return makePoint(lat, lon, height);
  }

  private number(what: string): number {
    const text = this.word(what);
    if (!NUMBER_RE.test(text)) {
      this.i--;
      this.fail(what);
    }
    return Number(text);
  }

  /** `lon lat [h], radius` */
  private circleBody(): GeoCircle {
    const center = this.coordinates();
    this.expect(',');
    const radius = parseDistance(this.word('a radius'), 'radius');
    return { center, radius };
  }

  /** `((lon lat, r), …)` */
  private circles(): GeoCircle[] {
    return this.list(() => {
      this.expect('(');
      const circle = this.circleBody();
      this.expect(')');
      return circle;
    });
  }

  /** `((lon lat, …), …)`: each ring convex (or its hull). */
  private rings(hull: boolean): GeoPoint[][] {
    const what = hull ? 'CHULL' : 'POLYGON';
    return this.list(() => convexRing(this.list(() => this.coordinates()), hull, `${what} ring`));
  }

  /** `lon lat` or `(lon lat)` */
  private multipointItem(): GeoPoint {
    if (!this.peek('(')) return this.coordinates();
    this.i++;
    const p = this.coordinates();
    this.expect(')');
    return p;
  }
}

/** Canonical EWKT of a geometry (see the file comment). */
export function formatEwkt(g: Geometry): string {
  switch (g.kind) {
    case 'point':
      return `POINT(${coords(g.point)})`;
    case 'circle':
      return `CIRCLE(${circleText(g.circle)})`;
    case 'convex':
      return g.circles.length === 0 ? 'CONVEX EMPTY' : `CONVEX(${g.circles.map((c) => `(${circleText(c)})`).join(', ')})`;
    case 'polygon':
      return `POLYGON(${ringsText(g.rings)})`;
    case 'multipoint':
      return `MULTIPOINT(${g.points.map(coords).join(', ')})`;
    case 'multicircle':
      return `MULTICIRCLE(${g.circles.map((c) => `(${circleText(c)})`).join(', ')})`;
    case 'multiconvex':
      return `MULTICONVEX(${g.convexes.map((cs) => `(${cs.map((c) => `(${circleText(c)})`).join(', ')})`).join(', ')})`;
    case 'multipolygon':
      return `MULTIPOLYGON(${g.polygons.map((rings) => `(${ringsText(rings)})`).join(', ')})`;
    case 'collection':
      return g.geometries.length === 0 ? 'GEOMETRYCOLLECTION EMPTY' : `GEOMETRYCOLLECTION(${g.geometries.map(formatEwkt).join(', ')})`;
  }
}

function num(n: number): string {
  return String(n === 0 ? 0 : n);
}

function coords(p: GeoPoint): string {
  return p.height === undefined ? `${num(p.lon)} ${num(p.lat)}` : `${num(p.lon)} ${num(p.lat)} ${num(p.height)}`;
}

function circleText(c: GeoCircle): string {
  return `${coords(c.center)}, ${num(c.radius)}`;
}

function ringsText(rings: ReadonlyArray<readonly GeoPoint[]>): string {
  return rings.map((ring) => `(${ring.map(coords).join(', ')})`).join(', ');
}
