/**
 * The OpenAPI document and the route table it is generated from (API.md
 * §16.4, §3.1): docs/openapi.json is what the server serves at `/.openapi`
 * and a valid OpenAPI 3.1 document; every route of the table is served
 * (never 405) and every other method is a 405 whose `Allow` is the table's.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { openApiDocument, routeSummary } from '@tessera/coordinator';
import { KNOWN_METHODS } from '@tessera/http';
import { call, REPO_ROOT, removeDir, startServer, tempDataDir, type Server } from './harness.js';

const MASTER = 'openapi-test-master-key-0123456789';
const asMaster = { authorization: `Bearer ${MASTER}` };
const CHECKED_IN = join(REPO_ROOT, 'docs/openapi.json');
const REGENERATE = 'docs/openapi.json is not what the route table generates: run `npx tsc -b && node scripts/openapi.mjs --write` and commit it';
const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };

/** A concrete path of each resource kind of the table. */
const SAMPLE_PATHS: Record<string, string> = {
  root: '/', index: '/oa/', document: '/oa/1', templates: '/.templates/', template: '/.templates/oa', aliases: '/.aliases/',
  alias: '/.aliases/oa-alias/', keys: '/.keys/', key: '/.keys/oa', metrics: '/:metrics', healthz: '/healthz', readyz: '/readyz',
  openapi: '/.openapi', snapshots: '/.snapshots/', dashboard: '/.dashboard/', dashboard_file: '/.dashboard/app.js',
};
/** The dashboard serves reads only; any other method there names an index of a reserved name (API.md §16), refused by the grammar. */
const READ_ONLY_KINDS = new Set(['dashboard', 'dashboard_file']);

describe('docs/openapi.json', () => {
  it('is the document the route table generates (regenerate with scripts/openapi.mjs --write)', () => {
    const checkedIn = readFileSync(CHECKED_IN, 'utf8');
    const generated = `${JSON.stringify(openApiDocument(version), null, 2)}\n`;
    if (checkedIn !== generated) throw new Error(REGENERATE);
  });

  it('is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator)', async () => {
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(readFileSync(CHECKED_IN, 'utf8')) as Record<string, unknown>);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('describes every route of the table, custom methods as their POST mapping with x-tessera-method', () => {
    const doc = openApiDocument(version) as { paths: Record<string, Record<string, { 'x-tessera-method'?: string }>> };
    for (const { path, methods } of routeSummary()) {
      for (const method of methods) {
        const custom = !['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'PATCH'].includes(method);
        const operation = custom ? doc.paths[`${path}:${method.toLowerCase()}`]?.post : doc.paths[path]?.[method.toLowerCase()];
        expect({ path, method, described: operation !== undefined }).toEqual({ path, method, described: true });
        if (custom) expect(operation?.['x-tessera-method']).toBe(method);
      }
    }
  });
});

describe('a server: /.openapi and the route table', () => {
  let server: Server;
  const dataDir = tempDataDir('tessera-openapi-');

  beforeAll(async () => {
    server = await startServer({ dataDir, env: { TESSERA_API_KEY: MASTER } });
  });
  afterAll(async () => {
    await server.stop();
    removeDir(dataDir);
  });

  it('GET /.openapi answers the checked-in document as JSON, YAML on request, and needs a key like other admin reads', async () => {
    const served = await call(server, 'GET', '/.openapi', undefined, asMaster);
    expect(served.status).toBe(200);
    expect(String(served.headers['content-type'])).toMatch(/^application\/json/);
    if (JSON.stringify(served.json) !== JSON.stringify(JSON.parse(readFileSync(CHECKED_IN, 'utf8')))) throw new Error(REGENERATE);
    const yaml = await call(server, 'GET', '/.openapi', undefined, { ...asMaster, accept: 'application/yaml' });
    expect(String(yaml.headers['content-type'])).toMatch(/^application\/yaml/);
    expect(yaml.json).toEqual(served.json);
    expect((await call(server, 'GET', '/.openapi')).status).toBe(401);
  });

  it('every route of the table is served (not 405); every other method is 405 with the Allow the table gives', async () => {
    const summary = routeSummary();
    expect(summary.map((r) => r.kind).sort()).toEqual(Object.keys(SAMPLE_PATHS).sort());
    for (const { kind, methods, allow } of summary) {
      const path = SAMPLE_PATHS[kind] as string;
      for (const method of [...KNOWN_METHODS, 'FROBNICATE']) {
        const body = method === 'GET' || method === 'HEAD' || method === 'DELETE' || method === 'OPTIONS' ? undefined : {};
        const r = await call(server, method, path, body, asMaster);
        if (methods.includes(method)) {
          expect({ kind, method, status: r.status === 405 ? 405 : 'served' }).toEqual({ kind, method, status: 'served' });
          if (method === 'OPTIONS') expect({ kind, allow: r.headers.allow }).toEqual({ kind, allow });
        } else if (READ_ONLY_KINDS.has(kind)) {
          // Answered by the grammar as for an index (or document) of that name (400 reserved_index_name, 404, 405…), never by the dashboard.
          expect({ kind, method, dashboard: String(r.headers['content-type']).startsWith('text/html') || r.headers.allow === allow })
            .toEqual({ kind, method, dashboard: false });
        } else if ((method === 'OPEN' || method === 'CLOSE') && r.status === 501) {
          // API.md §3.1: not implemented rather than not allowed.
        } else {
          expect({ kind, method, status: r.status, allow: r.headers.allow }).toEqual({ kind, method, status: 405, allow });
        }
      }
    }
  });
});
