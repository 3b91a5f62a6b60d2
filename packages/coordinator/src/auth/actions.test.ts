import { accessOf } from './actions.js';
import { parseKeyDefinition, reachesAll } from './keys.js';

describe('accessOf: the one endpoint → action table', () => {
  it.each([
    ['GET', '/logs/1', 'read', ['/logs/']], ['INFO', '/logs/1', 'read', ['/logs/']], ['HEAD', '/logs/', 'read', ['/logs/']],
    ['SEARCH', '/a,b/', 'search', ['/a/', '/b/']], ['COUNT', '/logs/2026*/', 'search', ['/logs/2026*/']],
    ['PUT', '/logs/1', 'write', ['/logs/']], ['PATCH', '/logs/1', 'write', ['/logs/']], ['POST', '/logs/', 'write', ['/logs/']],
    ['RESTORE', '/logs/', 'write', ['/logs/']], ['COMMIT', '/logs/', 'write', ['/logs/']],
    ['PUT', '/logs/', 'admin', ['/logs/']], ['DELETE', '/logs/', 'admin', ['/logs/']], ['DUMP', '/logs/', 'admin', ['/logs/']],
    ['GET', '/', 'read', []], ['GET', '/:metrics', 'admin', []], ['GET', '/.nodes', 'admin', []], ['PUT', '/.templates/t', 'admin', []],
    ['POST', '/healthz', 'admin', []], ['FROB', '/logs/', 'admin', ['/logs/']], ['GET', '/a//b/', 'admin', []],
  ])('%s %s → %s on %j', (method, path, action, indexes) => {
    expect(accessOf(method, path)).toEqual({ kind: 'action', action, indexes });
  });

  it('the health checks are open to GET and HEAD; /.keys/ is the master key\'s', () => {
    for (const path of ['/healthz', '/readyz']) for (const method of ['GET', 'HEAD']) expect(accessOf(method, path)).toEqual({ kind: 'open' });
    for (const path of ['/.keys', '/.keys/', '/.keys/k']) expect(accessOf('GET', path)).toEqual({ kind: 'master' });
  });

  it('the dashboard\'s page and files are open to GET and HEAD only; the root stays a read', () => {
    for (const path of ['/.dashboard', '/.dashboard/', '/.dashboard/app-X.js']) {
      for (const method of ['GET', 'HEAD']) expect(accessOf(method, path)).toEqual({ kind: 'open' });
      for (const method of ['PUT', 'DELETE', 'POST']) expect(accessOf(method, path)).toEqual({ kind: 'action', action: 'admin', indexes: [] });
    }
    expect(accessOf('GET', '/')).toEqual({ kind: 'action', action: 'read', indexes: [] });
  });
});

describe('scoped keys', () => {
  const NOW = Date.parse('2026-01-01T00:00:00Z');

  it('patterns: `*` crosses `/` and matches nothing too; a plain path names one index; every index named must be reached', () => {
    const { key } = parseKeyDefinition({ _name: 'k', _actions: ['write', 'read'], _indexes: ['/logs/*', '/one'] }, NOW);
    expect(key).toEqual({ actions: ['read', 'write'], indexes: ['/logs/*', '/one/'], createdAt: '2026-01-01T00:00:00.000Z' });
    for (const index of ['/logs/', '/logs/2026/', '/logs/eu/2026/', '/one/']) expect(reachesAll(key, [index])).toBe(true);
    for (const index of ['/logsx/', '/one/two/', '/on/', '/']) expect(reachesAll(key, [index])).toBe(false);
    expect(reachesAll(key, ['/logs/a/', '/other/'])).toBe(false);
  });

  it('expiry: a later ISO date is kept normalised; a past one or another form is refused', () => {
    expect(parseKeyDefinition({ _name: 'k', _actions: ['read'], _indexes: ['/*'], _expires_at: '2026-01-01T00:00:01+00:00' }, NOW).key.expiresAt)
      .toBe('2026-01-01T00:00:01.000Z');
    for (const at of ['2026-01-01T00:00:00Z', '2025-06-01T00:00:00Z', '1767225601000', 1767225601000, 'soon']) {
      expect(() => parseKeyDefinition({ _name: 'k', _actions: ['read'], _indexes: ['/*'], _expires_at: at }, NOW)).toThrow(/_expires_at/);
    }
  });
});
