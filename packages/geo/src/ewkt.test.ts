import { TesseraError } from '@tessera/errors';
import { formatEwkt, looksLikeEwkt, parseEwkt } from './ewkt.js';

function code(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    return err instanceof TesseraError ? `${err.status} ${err.code}` : String(err);
  }
  return 'ok';
}

const canonical = (text: string): string => formatEwkt(parseEwkt(text));

describe('EWKT (API.md §8.6)', () => {
  test('each geometry round-trips through its canonical text', () => {
    const texts = [
      'POINT(-73.97 40.78)',
      'POINT(-73.97 40.78 12.5)',
      'CIRCLE(2.35 48.86, 2720)',
      'CONVEX((2.35 48.86, 5000), (2.4 48.9, 6000))',
      'POLYGON((0 0, 10 0, 10 10, 0 10))',
      'POLYGON((0 0, 10 0, 10 10, 0 10), (2 2, 4 2, 4 4, 2 4))',
      'MULTIPOINT(1 2, 3 4)',
      'MULTICIRCLE((1 2, 100), (3 4, 200))',
      'MULTICONVEX(((1 2, 100), (1.001 2, 100)), ((3 4, 200)))',
      'MULTIPOLYGON(((0 0, 1 0, 1 1)), ((5 5, 6 5, 6 6)))',
      'GEOMETRYCOLLECTION(POINT(1 2), CIRCLE(3 4, 10), GEOMETRYCOLLECTION(POINT(5 6)))',
      'GEOMETRYCOLLECTION EMPTY',
    ];
    for (const text of texts) {
      expect(canonical(text)).toBe(text);
      expect(parseEwkt(canonical(text))).toEqual(parseEwkt(text));
    }
  });

  test('spellings: case, spaces, SRID=4326, MULTIPOINT with parentheses, radius units, EMPTY', () => {
    expect(canonical('  srid=4326; point ( 1   2 ) ')).toBe('POINT(1 2)');
    expect(canonical('MULTIPOINT((1 2),(3 4))')).toBe('MULTIPOINT(1 2, 3 4)');
    expect(canonical('CIRCLE(1 2,2.72km)')).toBe('CIRCLE(1 2, 2720)');
    expect(canonical('CIRCLE(1 2, 1mi)')).toBe('CIRCLE(1 2, 1609.344)');
    expect(canonical('POINT EMPTY')).toBe('GEOMETRYCOLLECTION EMPTY');
    expect(canonical('POINT(-0 0)')).toBe('POINT(0 0)');
  });

  test('a polygon is one value however its ring is written: closed, clockwise, rotated', () => {
    const expected = 'POLYGON((0 0, 10 0, 10 10, 0 10))';
    expect(canonical('POLYGON((0 0, 10 0, 10 10, 0 10, 0 0))')).toBe(expected);
    expect(canonical('POLYGON((0 10, 10 10, 10 0, 0 0))')).toBe(expected);
    expect(canonical('POLYGON((10 10, 0 10, 0 0, 10 0))')).toBe(expected);
  });

  test('CHULL is the hull of its points, written as a polygon', () => {
    expect(canonical('CHULL((0 0, 5 5, 10 0, 3 2, 10 10, 0 10))')).toBe('POLYGON((0 0, 10 0, 10 10, 0 10))');
    expect(canonical('MULTICHULL(((0 0, 1 1, 1 0, 0 1, 0.5 0.5)))')).toBe('MULTIPOLYGON(((0 0, 1 0, 1 1, 0 1)))');
  });

  test('malformed text, other datums, bad coordinates and non-convex polygons are 400', () => {
    for (const bad of [
      '', 'POINT', 'POINT()', 'POINT(1)', 'POINT(1 2', 'POINT(1 2))', 'POINT(1 2 3 4)', 'POINT(a b)', 'POINT(1 95)',
      'POINT(190 0)', 'SRID=3857;POINT(1 2)', 'SRID=x;POINT(1 2)', 'LINESTRING(0 0, 1 1)', 'CIRCLE(1 2)', 'CIRCLE(1 2, -5)',
      'CIRCLE(1 2, 5 parsecs)', 'POLYGON((0 0, 1 1))', 'POLYGON((0 0, 1 0, 2 0))', 'POLYGON((0 0, 10 0, 5 2, 10 10, 0 10))',
      'POLYGON((0 0, 120 0, -120 0))', 'POLYGON((0 0, 2 0, 1 1, 0 1, 2 1))', `40°26'46"N 79°58'56"W`, '40.4461,-79.9822',
      'GEOMETRYCOLLECTION(POINT(1 2),)', 'GEOMETRYCOLLECTION(' .repeat(20) + 'POINT(1 2)' + ')'.repeat(20),
    ]) {
      expect({ bad, code: code(() => parseEwkt(bad)) }).toEqual({ bad, code: '400 invalid_geo' });
    }
  });

  test('looksLikeEwkt: keyword and a parenthesis or EMPTY', () => {
    expect(looksLikeEwkt('POINT(1 2)')).toBe(true);
    expect(looksLikeEwkt('SRID=4326; circle (1 2, 3)')).toBe(true);
    expect(looksLikeEwkt('POINT EMPTY')).toBe(true);
    expect(looksLikeEwkt('Point of view')).toBe(false);
    expect(looksLikeEwkt('POLYGONAL(1 2)')).toBe(false);
    expect(looksLikeEwkt('hello')).toBe(false);
  });
});
