/**
 * Geo search on one shard's readers (two segments and a write buffer),
 * indexed by the real indexer (documentTerms): `_in` shapes against a
 * brute-force great-circle check, with terms and values, values only, terms
 * only and no accuracy; weights π − angle; exact-shape equality; distance
 * sorts; and the 400s.
 */
import { TesseraError } from '@tessera/errors';
import { createSchema, type Schema } from '@tessera/schema';
import { documentTerms } from '../indexing/document-terms.js';
import { parseQuery, parseSort } from '@tessera/search-model';
import { flushWriteBuffer } from '../segments/flush.js';
import { SegmentReader } from '../segments/segment-reader.js';
import { WriteBuffer } from '../segments/write-buffer.js';
import { search, type SearchReader, type SearchResult } from './index.js';
import { random } from './search.fixture.js';

const SCHEMA: Schema = createSchema({
  _id: { _type: 'integer' },
  loc: { _type: 'array/geo' },
  terms: { _type: 'geo', _index: 'field_terms' },
  vals: { _type: 'geo', _index: 'field_values' },
  plain: { _type: 'geo', _accuracy: [] },
  name: { _type: 'keyword' },
});

const R = 6_371_008.8;
const RAD = Math.PI / 180;

function haversine(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const h = Math.sin(((lat2 - lat1) * RAD) / 2) ** 2 + Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * Math.sin(((lon2 - lon1) * RAD) / 2) ** 2;
  return 2 * R * Math.asin(Math.min(1, Math.sqrt(h)));
}

interface Place {
  id: number;
  /** The points standing for the document's value (points, or a circle's centre). */
  points: Array<[number, number]>;
}

/** 300 documents around Texas: mostly points, some with two points, some circles (their centre counts); a few without a place. */
function makePlaces(): { places: Place[]; bodies: Array<Record<string, unknown>> } {
  const rnd = random(7);
  const places: Place[] = [];
  const bodies: Array<Record<string, unknown>> = [];
  for (let id = 1; id <= 300; id++) {
    const p = (): [number, number] => [25 + rnd() * 12, -106 + rnd() * 12];
    const kind = id % 10;
    if (kind === 9) {
      bodies.push({ _id: id, name: 'nowhere' });
      places.push({ id, points: [] });
      continue;
    }
    const a = p();
    let value: unknown;
    let points: Array<[number, number]>;
    if (kind === 7) {
      const b = p();
      value = [[a[1], a[0]], { _point: { _latitude: b[0], _longitude: b[1] } }];
      points = [a, b];
    } else if (kind === 8) {
      value = { _circle: { _latitude: a[0], _longitude: a[1], _radius: 5000 } };
      points = [a];
    } else {
      value = id % 2 === 0 ? { _point: { _latitude: a[0], _longitude: a[1] } } : `POINT(${a[1]} ${a[0]})`;
      points = [a];
    }
    const single = points.length === 1 ? value : { _point: { _latitude: a[0], _longitude: a[1] } };
    bodies.push({ _id: id, loc: value, terms: single, vals: single, plain: single, name: `n${id}` });
    places.push({ id, points });
  }
  return { places, bodies };
}

const { places, bodies } = makePlaces();
let readers: SearchReader[];

beforeAll(async () => {
  readers = [];
  const parts = [bodies.slice(0, 120), bodies.slice(120, 220), bodies.slice(220)];
  for (let i = 0; i < parts.length; i++) {
    const buffer = new WriteBuffer();
    for (const body of parts[i]!) buffer.add(body._id as number, documentTerms(SCHEMA, body, body._id as number));
    if (i < parts.length - 1) {
      buffer.freeze();
      readers.push(new SegmentReader(i + 1, await flushWriteBuffer(buffer)));
    } else {
      readers.push(buffer);
    }
  }
});

function run(dsl: unknown, sort?: unknown, k = 1000): SearchResult {
  return search(readers, { query: parseQuery(dsl), sort: parseSort(sort), k }, SCHEMA);
}

const ids = (r: SearchResult): number[] => r.hits.map((h) => h.docid).sort((a, b) => a - b);

function error(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof TesseraError) return `${err.status} ${err.code}`;
    throw err;
  }
  return 'ok';
}

describe('_in: documents with a point inside the shape', () => {
  const circles = [
    { lat: 31, lon: -100, r: 150_000 },
    { lat: 30.2, lon: -97.7, r: 20_000 },
    { lat: 36, lon: -95, r: 400_000 },
    { lat: 0, lon: 0, r: 1000 },
  ];

  test.each(circles)('circle %o: the brute-force set on every kind of field; weight π − nearest angle', ({ lat, lon, r }) => {
    const expected = places.filter((p) => p.points.some(([la, lo]) => haversine(lat, lon, la, lo) <= r)).map((p) => p.id);
    const circle = { _circle: { _latitude: lat, _longitude: lon, _radius: r } };
    const result = run({ loc: { _in: circle } });
    expect(ids(result)).toEqual(expected);
    expect(result.total).toBe(expected.length);
    for (const hit of result.hits) {
      const nearest = Math.min(...places[hit.docid - 1]!.points.map(([la, lo]) => haversine(lat, lon, la, lo)));
      expect(hit.score).toBeCloseTo(Math.PI - nearest / R, 9);
    }
    // Single points only: the same set for values without terms, and without accuracy terms.
    const singles = places.filter((p) => p.points.length > 0 && haversine(lat, lon, p.points[0]![0], p.points[0]![1]) <= r).map((p) => p.id);
    expect(ids(run({ vals: { _in: circle } }))).toEqual(singles);
    expect(ids(run({ plain: { _in: circle } }))).toEqual(singles);
    // Terms without values: the covering's trixels, a superset.
    const approximate = ids(run({ terms: { _in: circle } }));
    for (const id of singles) expect(approximate).toContain(id);
  });

  test('polygon, EWKT and multi-shapes', () => {
    const inBox = (la: number, lo: number): boolean => la >= 28 && la <= 33 && lo >= -103 && lo <= -98;
    const polygon = { _polygon: { _latitude: [28, 28, 33, 33], _longitude: [-103, -98, -98, -103] } };
    const byPolygon = ids(run({ loc: { _in: polygon } }));
    // A "box" on the sphere has great-circle edges, not parallels: compare away from the edges only.
    const clearlyIn = places.filter((p) => p.points.some(([la, lo]) => la > 28.1 && la < 32.5 && lo > -102.9 && lo < -98.1)).map((p) => p.id);
    const clearlyOut = places.filter((p) => p.points.every(([la, lo]) => !inBox(la, lo) && (la < 27.5 || la > 33.5 || lo < -103.5 || lo > -97.5))).map((p) => p.id);
    for (const id of clearlyIn) expect(byPolygon).toContain(id);
    for (const id of clearlyOut) expect(byPolygon).not.toContain(id);
    expect(ids(run({ loc: { _in: { _ewkt: 'POLYGON((-103 28, -98 28, -98 33, -103 33))' } } }))).toEqual(byPolygon);
    const a = { _circle: { _latitude: 31, _longitude: -100, _radius: 100_000 } };
    const b = { _circle: { _latitude: 35, _longitude: -96, _radius: 100_000 } };
    const union = [...new Set([...ids(run({ loc: { _in: a } })), ...ids(run({ loc: { _in: b } }))])].sort((x, y) => x - y);
    expect(ids(run({ loc: { _in: { _ewkt: 'MULTICIRCLE((-100 31, 100000), (-96 35, 100000))' } } }))).toEqual(union);
    expect(ids(run({ loc: { _in: { _geometrycollection: [a, b] } } }))).toEqual(union);
  });

  test('combines with other leaves and counts without scoring', () => {
    const circle = { _circle: { _latitude: 31, _longitude: -100, _radius: 300_000 } };
    const all = ids(run({ loc: { _in: circle } }));
    expect(all.length).toBeGreaterThan(5);
    expect(ids(run({ _and: [{ loc: { _in: circle } }, { name: `n${all[0]}` }] }))).toEqual([all[0]]);
    expect(search(readers, { query: parseQuery({ loc: { _in: circle } }), sort: [], k: 0, countOnly: true }, SCHEMA).total).toBe(all.length);
  });
});

describe('exact shapes', () => {
  test('{field: <shape>} matches the value equal to the shape, however spelt; weight 0', () => {
    const p = places.find((x) => x.id === 2)!.points[0]!;
    const point = { _point: { _latitude: p[0], _longitude: p[1] } };
    expect(ids(run({ loc: point }))).toEqual([2]);
    expect(run({ loc: point }).hits[0]!.score).toBe(0);
    expect(ids(run({ loc: { _ewkt: `POINT(${p[1]} ${p[0]})` } }))).toEqual([2]);
    expect(ids(run({ loc: `POINT(${p[1]} ${p[0]})` }))).toEqual([2]);
    expect(ids(run({ vals: point }))).toEqual([2]);
    const c = places.find((x) => x.id === 8)!.points[0]!;
    expect(ids(run({ loc: { _circle: { _latitude: c[0], _longitude: c[1], _radius: '5km' } } }))).toEqual([8]);
    expect(ids(run({ loc: { _circle: { _latitude: c[0], _longitude: c[1], _radius: 5001 } } }))).toEqual([]);
    expect(ids(run({ loc: '*' })).length).toBe(270);
  });

  test('shapes on other fields: text equality for keywords, 400 for numbers; malformed shapes are 400', () => {
    expect(ids(run({ name: { _point: { _latitude: 1, _longitude: 2 } } }))).toEqual([]);
    const schema = createSchema({ n: { _type: 'integer' } });
    expect(error(() => search(readers, { query: parseQuery({ n: { _point: { _latitude: 1, _longitude: 2 } } }), sort: [], k: 10 }, schema))).toBe('400 invalid_query');
    expect(error(() => run({ name: { _in: { _point: { _latitude: 1, _longitude: 2 } } } }))).toBe('400 invalid_query');
    expect(error(() => run({ loc: { _in: { _circle: { _latitude: 100, _longitude: 2, _radius: 3 } } } }))).toBe('400 invalid_geo');
    expect(error(() => run({ loc: { _point: { _latitude: '1', _longitude: 2 } } }))).toBe('400 invalid_geo');
    expect(error(() => run({ loc: { _in: { _ewkt: "40°26'46\"N 79°58'56\"W" } } }))).toBe('400 invalid_geo');
  });
});

describe('sorting by great-circle distance', () => {
  test('ascending by the nearest point, descending by the farthest, documents without a place last', () => {
    const ref = { lat: 31, lon: -100 };
    const distance = (p: Place, far: boolean): number =>
      (far ? Math.max : Math.min)(...p.points.map(([la, lo]) => haversine(ref.lat, ref.lon, la, lo)));
    const withPlace = places.filter((p) => p.points.length > 0);
    const asc = run({}, { loc: { _value: { _point: { _latitude: ref.lat, _longitude: ref.lon } }, _order: 'asc' } }, 300);
    expect(asc.hits.slice(0, withPlace.length).map((h) => h.docid)).toEqual(
      [...withPlace].sort((a, b) => distance(a, false) - distance(b, false) || a.id - b.id).map((p) => p.id));
    asc.hits.slice(0, withPlace.length).forEach((h) => expect(h.sortValues![0]).toBeCloseTo(distance(places[h.docid - 1]!, false), 3));
    expect(asc.hits.slice(withPlace.length).every((h) => h.sortValues![0] === null)).toBe(true);
    const desc = run({}, { loc: { _value: `POINT(${ref.lon} ${ref.lat})`, _order: 'desc' } }, 10);
    expect(desc.hits.map((h) => h.docid)).toEqual([...withPlace].sort((a, b) => distance(b, true) - distance(a, true) || a.id - b.id).slice(0, 10).map((p) => p.id));
    // A shape's centroid is the reference.
    const byCircle = run({}, { loc: { _value: { _circle: { _latitude: ref.lat, _longitude: ref.lon, _radius: 1000 } } } }, 5);
    expect(byCircle.hits.map((h) => h.docid)).toEqual(asc.hits.slice(0, 5).map((h) => h.docid));
  });

  test('a geo sort without _value, or with a bad one, is 400', () => {
    expect(error(() => run({}, 'loc'))).toBe('400 invalid_sort');
    expect(error(() => run({}, { loc: { _order: 'asc' } }))).toBe('400 invalid_sort');
    expect(error(() => run({}, { loc: { _value: 'somewhere' } }))).toBe('400 invalid_sort');
    expect(error(() => run({}, { loc: { _value: 'GEOMETRYCOLLECTION EMPTY' } }))).toBe('400 invalid_sort');
  });
});

describe('indexing', () => {
  test('trixel terms at each accuracy level under the field prefix (<a>. = level 10), and the exact-shape term', () => {
    const doc = documentTerms(SCHEMA, { loc: 'POINT(-95.63079 31.76212)' }, 1);
    const trixels = doc.terms.filter((t) => t.startsWith('loc.<'));
    expect(trixels.map((t) => t.slice(0, t.indexOf('.G') + 2))).toEqual(['loc.<3>.G', 'loc.<5>.G', 'loc.<8>.G', 'loc.<a>.G', 'loc.<c>.G', 'loc.<f>.G']);
    expect(doc.terms.filter((t) => /^loc\.G[0-9a-f]{16}$/.test(t))).toHaveLength(1);
    expect((doc.strings ?? []).find((s) => s.values[0] === 'POINT(-95.63079 31.76212)')).toBeDefined();
  });
});
