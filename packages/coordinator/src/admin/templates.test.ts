import { TesseraError } from '@tessera/errors';
import { matchingTemplates, parseTemplate, patternMatches, withTemplates, type IndexTemplate } from './templates.js';
import { resolveAliases, parseAlias } from './aliases.js';
import { isReservedIndex } from './reserved.js';

function failure(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof TesseraError) return `${err.status} ${err.code}: ${err.message}`;
    throw err;
  }
  return 'no error';
}

describe('template patterns', () => {
  it.each([
    ['/logs/*', '/logs/2026-11/', true],
    ['/logs/*', '/logs/a/b/', true],
    ['/logs/*', '/logs/', true],
    ['/logs/*', '/log/', false],
    ['/logs/', '/logs/', true],
    ['/logs/', '/logs/a/', false],
    ['*', '/anything/', true],
    ['/a*/b/', '/a/x/b/', true],
    ['/a*/b/', '/a/x/c/', false],
    ['/*-*/', '/x-y/', true],
    ['/*-*/', '/xy/', false],
    ['/ab*ba/', '/aba/', false],
  ])('%s on %s: %s', (pattern, path, expected) => {
    expect(patternMatches(pattern, path)).toBe(expected);
  });
});

describe('templates applied at creation', () => {
  const t = (name: string, body: unknown): [string, IndexTemplate] => [name, parseTemplate(name, body)];

  it('lowest _priority first, equal priorities by name; the request last, field by field', () => {
    const templates = Object.fromEntries([
      t('high', { _patterns: ['/logs/*'], _priority: 10, _settings: { number_of_shards: 2 }, _schema: { level: { _type: 'keyword' } } }),
      t('low', { _patterns: ['/logs/*'], _priority: 1, _settings: { number_of_shards: 1, number_of_replicas: 0 },
        _schema: { _strict: true, level: { _type: 'text' }, user: { _type: 'object', name: { _type: 'text' } } } }),
      t('other', { _patterns: ['/metrics/*'], _settings: { number_of_shards: 9 } }),
    ]);
    const matching = matchingTemplates(templates, '/logs/a/');
    expect(matching.map((m) => m._priority)).toEqual([1, 10]);
    const applied = withTemplates(matching, { number_of_replicas: 2 }, { user: { age: { _type: 'integer' } }, level: { _type: 'keyword', _index: 'terms' } });
    expect(applied.settings).toEqual({ number_of_shards: 2, number_of_replicas: 2 });
    expect(applied.schema).toEqual({
      _strict: true,
      level: { _type: 'keyword', _index: 'terms' },
      user: { _type: 'object', name: { _type: 'text' }, age: { _type: 'integer' } },
    });
  });

  it('nothing matching leaves settings and schema as the request gave them (undefined stays undefined)', () => {
    expect(withTemplates([], undefined, undefined)).toEqual({ settings: undefined, schema: undefined });
  });

  it('dotted names in a template schema are expanded', () => {
    expect(parseTemplate('d', { _patterns: ['/d/'], _schema: { 'a.b': { _type: 'keyword' } } })._schema).toEqual({ a: { b: { _type: 'keyword' } } });
  });

  it.each([
    [[], 'a template must be an object'],
    [{ _patterns: '/x/' }, "'_patterns' must be a list"],
    [{ _patterns: [] }, "'_patterns' must be a list"],
    [{ _patterns: ['logs*'] }, "must be a string starting with '/'"],
    [{ _patterns: ['/x/'], _priority: 1.5 }, "'_priority' must be an integer"],
    [{ _patterns: ['/x/'], _settings: { number_of_shards: 0 } }, "'number_of_shards' must be an integer"],
    [{ _patterns: ['/x/'], _schema: { a: { _type: 'nonsense' } } }, 'nonsense'],
    [{ _patterns: ['/x/'], _mappings: {} }, "unknown key '_mappings'"],
  ])('%j is refused: %s', (body, message) => {
    expect(failure(() => parseTemplate('t', body))).toMatch(/^400 invalid_template: Invalid template 't': /);
    expect(failure(() => parseTemplate('t', body))).toContain(message);
  });

  it('a name is one path segment', () => {
    expect(failure(() => parseTemplate('a/b', { _patterns: ['/x/'] }))).toMatch(/^400 invalid_template/);
    expect(failure(() => parseTemplate('', { _patterns: ['/x/'] }))).toMatch(/^400 invalid_template/);
  });
});

describe('aliases', () => {
  const aliases = {
    '/one/': { _indexes: ['/a/'] },
    '/two/': { _indexes: ['/a/', '/b/'] },
    '/w/': { _indexes: ['/a/', '/b/'], _write_index: '/b/' },
  };
  const path = (...indexes: string[]) => ({ indexes, id: undefined, selector: undefined });

  it('reads go to every index; writes to the write index or the only one; defining is a 409', () => {
    expect(resolveAliases(path('/two/', '/c/', '/a/'), 'read', aliases).indexes).toEqual(['/a/', '/b/', '/c/']);
    expect(resolveAliases(path('/one/'), 'write', aliases).indexes).toEqual(['/a/']);
    expect(resolveAliases(path('/w/'), 'write', aliases).indexes).toEqual(['/b/']);
    expect(failure(() => resolveAliases(path('/two/'), 'write', aliases))).toMatch(/^400 alias_needs_write_index/);
    expect(failure(() => resolveAliases(path('/one/'), 'define', aliases))).toMatch(/^409 alias_conflict/);
    const plain = path('/c/');
    expect(resolveAliases(plain, 'read', aliases)).toBe(plain);
    expect(resolveAliases(plain, 'read', undefined)).toBe(plain);
  });

  it('bodies: canonical paths, the write index among the indexes, no alias of an alias', () => {
    expect(parseAlias('/x/', { _indexes: ['a', '/b/c'], _write_index: 'a/' }, () => false)).toEqual({ _indexes: ['/a/', '/b/c/'], _write_index: '/a/' });
    expect(parseAlias('/x/', { _write_index: '/a/' }, () => false)).toEqual({ _indexes: ['/a/'], _write_index: '/a/' });
    expect(failure(() => parseAlias('/x/', { _indexes: ['/a/'], _write_index: '/b/' }, () => false))).toMatch(/^400 invalid_alias/);
    expect(failure(() => parseAlias('/x/', { _indexes: ['/y/'] }, (p) => p === '/y/'))).toMatch(/^400 invalid_alias.*is an alias/);
    expect(failure(() => parseAlias('/x/', { _indexes: ['/x/'] }, () => false))).toMatch(/^400 invalid_alias/);
    expect(failure(() => parseAlias('/x/', { _indexes: [] }, () => false))).toMatch(/^400 invalid_alias/);
    expect(failure(() => parseAlias('/x/', { _indexes: ['/a*/'] }, () => false))).toMatch(/^400 invalid_index_name/);
  });

  it('reserved roots', () => {
    for (const name of ['/.templates/', '/.aliases/', '/.keys/', '/.dashboard/', '/.openapi/', '/.nodes/', '/.keys/a/']) expect(isReservedIndex(name)).toBe(true);
    for (const name of ['/keys/', '/.key/', '/.xapiand/', '/a/.keys/']) expect(isReservedIndex(name)).toBe(false);
  });
});
