/**
 * The web dashboard (API.md §16.4, docs/dashboard.md) end to end: a real
 * server, documents written through the API, the page loaded in headless
 * Chromium (test/src/browser.ts). Screenshots of a failing case are kept
 * (the failure message says where). With TESSERA_DASHBOARD_SCREENSHOTS=DIR
 * the search and metrics views are also saved there, as
 * dashboard-search.png and dashboard-metrics.png (docs/ has them so).
 */
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, withScreenshotOnFailure } from './browser.js';
import { call, removeDir, startServer, tempDataDir, type Server } from './harness.js';

const BOOKS = [
  { title: 'The running man', genre: 'scifi', year: 1982 },
  { title: 'A man who ran from the sea', genre: 'adventure', year: 1951 },
  { title: 'Running with the machines', genre: 'scifi', year: 2019 },
];
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
/** How long a view may take to show what it loaded (a shared, noisy machine: generous). */
const SHOWN_MS = 15_000;

let browser: Browser;

/** The top of the page, saved for the docs when TESSERA_DASHBOARD_SCREENSHOTS names a directory. */
async function keepForDocs(page: Page, name: string): Promise<void> {
  const dir = process.env.TESSERA_DASHBOARD_SCREENSHOTS;
  if (dir !== undefined) await page.screenshot({ path: join(dir, name), clip: { x: 0, y: 0, width: 1280, height: 560 } });
}

beforeAll(async () => {
  browser = await launchChromium();
}, 600_000); // installing chromium, when CI lacks it, takes minutes

afterAll(async () => {
  await browser?.close();
});

/** A server holding the books for the tests of the describe block around: started before them, stopped after. */
function serverWithBooks(args: string[], headers: Record<string, string> = {}): () => Server {
  let server: Server | undefined;
  const dataDir = tempDataDir();
  beforeAll(async () => {
    server = await startServer({ dataDir, args: ['--port', '0', '--data', dataDir, ...args] });
    await writeBooks(server, headers);
  });
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });
  return () => server as Server;
}

async function writeBooks(server: Server, headers: Record<string, string> = {}): Promise<void> {
  for (const [i, book] of BOOKS.entries()) {
    const reply = await call(server, 'PUT', `/books/${i + 1}?commit`, book, headers);
    expect(reply.status).toBe(200);
  }
}

/** A page of a fresh browser context (its own sessionStorage), failing the test on a script error in the page. */
async function newPage(): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  return { page, errors };
}

describe('dashboard without an API key', () => {
  const started = serverWithBooks([]);

  test('GET / answers the page to a browser and JSON to everyone else; the files are cached by ETag', async () => {
    const server = started();
    const page = await call(server, 'GET', '/', undefined, { accept: BROWSER_ACCEPT });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers.vary).toContain('Accept');
    expect(page.text).toContain('<div id="app"></div>');
    for (const accept of [undefined, '*/*', 'application/json', 'text/html, application/json']) {
      const json = await call(server, 'GET', '/', undefined, accept === undefined ? {} : { accept });
      expect((json.json as { server: string }).server).toMatch(/^Tessera/);
    }
    const again = await call(server, 'GET', '/.dashboard/', undefined, { 'if-none-match': String(page.headers.etag) });
    expect(again.status).toBe(304);
    const script = /src="\/\.dashboard\/([^"]+\.js)"/.exec(page.text)?.[1] as string;
    const js = await call(server, 'GET', `/.dashboard/${script}`, undefined, { 'accept-encoding': 'gzip' });
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['content-encoding']).toBe('gzip');
    expect(js.headers['cache-control']).toContain('immutable');
    // Only the files given are served: nothing else of the disk, however the path is spelt.
    for (const path of ['/.dashboard/nothing.js', '/.dashboard/..%2Fpackage.json', '/.dashboard/%2e%2e%2fpackage.json']) {
      const missing = await call(server, 'GET', path);
      expect([path, missing.status, (missing.json as { code?: string }).code]).toEqual([path, 404, 'dashboard_file_not_found']);
    }
    for (const path of ['/.dashboard/../package.json', '/.dashboard/%2E%2E/package.json']) {
      expect([path, (await call(server, 'GET', path)).status]).toEqual([path, 400]); // a `..` segment is no path of the API
    }
    // Writes there are still refused as an index of a reserved name (API.md §16).
    expect((await call(server, 'PUT', '/.dashboard/x', { a: 1 })).json).toMatchObject({ status: 400, code: 'reserved_index_name' });
  });

  test('indexes with counts and schemas, a search with a facet and highlights, a document, the nodes, a metrics chart', async () => {
    const server = started();
    const { page, errors } = await newPage();
    await withScreenshotOnFailure(page, 'dashboard-views', async () => {
      await page.goto(`${server.url}/`);
      // The index list, counted.
      const row = page.locator('tr[data-index="/books/"]');
      await row.locator('[data-testid=count]', { hasText: /^3$/ }).waitFor({ timeout: SHOWN_MS });
      await row.getByRole('button', { name: 'Schema' }).click();
      await page.locator('[data-testid=schema]', { hasText: '"genre"' }).waitFor({ timeout: SHOWN_MS });
      // A search: hits with the matched words marked, and a facet of genres.
      await row.getByRole('link', { name: 'Search' }).click();
      await page.getByLabel('Query').fill('running');
      await page.getByLabel('Facet').selectOption('genre');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.locator('[data-testid=hits] .summary', { hasText: /^2 matching/ }).waitFor({ timeout: SHOWN_MS });
      const marks = await page.locator('[data-testid=hits] mark').allTextContents();
      expect(marks.map((m) => m.toLowerCase())).toContain('running');
      const scifi = page.locator('[data-testid=facets] li', { hasText: 'scifi' });
      expect(await scifi.locator('.count').textContent()).toBe('2');
      await keepForDocs(page, 'dashboard-search.png');
      // Narrowing by the facet: every match, then only the adventure book.
      await page.getByLabel('Query').fill('');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.locator('[data-testid=hits] .summary', { hasText: /^3 matching/ }).waitFor({ timeout: SHOWN_MS });
      await page.locator('[data-testid=facets] li', { hasText: 'adventure' }).getByRole('link').click();
      await page.locator('[data-testid=hits] .summary', { hasText: /^1 matching/ }).waitFor({ timeout: SHOWN_MS });
      // The document view.
      await page.locator('[data-testid=hits] a.hit-id').first().click();
      await page.locator('[data-testid=document] pre', { hasText: 'A man who ran from the sea' }).waitFor({ timeout: SHOWN_MS });
      // The nodes and their shard copies.
      await page.getByRole('link', { name: 'Nodes' }).click();
      const node = page.locator('[data-node="node1"]');
      await node.locator('td', { hasText: '/books/' }).first().waitFor({ timeout: SHOWN_MS });
      expect(await node.locator('tbody tr').count()).toBe(5); // 5 shards, one copy each on one node
      // Live metrics: charts drawn once two readings are in.
      await page.getByRole('link', { name: 'Metrics' }).click();
      const chart = page.locator('[data-testid=chart]').first();
      const deadline = Date.now() + SHOWN_MS;
      while (Number(await chart.getAttribute('data-points')) < 2) {
        if (Date.now() > deadline) throw new Error(`the charts have ${await chart.getAttribute('data-points')} readings after ${SHOWN_MS} ms`);
        await page.waitForTimeout(200);
      }
      expect(await page.locator('[data-testid=chart] canvas').count()).toBe(4);
      await keepForDocs(page, 'dashboard-metrics.png');
      expect(errors).toEqual([]);
    });
    await page.context().close();
  });
});

describe('dashboard with a master key', () => {
  const KEY = 'dashboard-test-master-key';
  const started = serverWithBooks(['--api-key', KEY], { authorization: `Bearer ${KEY}` });

  test('the page and its files load without a key; everything else still needs one', async () => {
    const server = started();
    const page = await call(server, 'GET', '/', undefined, { accept: BROWSER_ACCEPT });
    expect(page.status).toBe(200);
    const script = /src="(\/\.dashboard\/[^"]+\.js)"/.exec(page.text)?.[1] as string;
    expect((await call(server, 'GET', script)).status).toBe(200);
    expect((await call(server, 'GET', '/')).status).toBe(401);
    expect((await call(server, 'GET', '/.nodes', undefined, { accept: BROWSER_ACCEPT })).status).toBe(401);
    expect((await call(server, 'DELETE', '/.dashboard/')).status).toBe(401);
  });

  test('the page asks for the key, refuses a wrong one, then works with the right one', async () => {
    const server = started();
    const { page, errors } = await newPage();
    await withScreenshotOnFailure(page, 'dashboard-api-key', async () => {
      await page.goto(`${server.url}/.dashboard/`);
      const key = page.getByLabel('API key');
      await key.waitFor({ timeout: SHOWN_MS });
      await key.fill('not-the-key');
      await page.getByRole('button', { name: 'Use this key' }).click();
      await page.getByRole('alert').filter({ hasText: 'refused' }).waitFor({ timeout: SHOWN_MS });
      await key.fill(KEY);
      await page.getByRole('button', { name: 'Use this key' }).click();
      await page.locator('tr[data-index="/books/"] [data-testid=count]', { hasText: /^3$/ }).waitFor({ timeout: SHOWN_MS });
      // Kept for this tab: a reload needs no new prompt.
      await page.reload();
      await page.locator('tr[data-index="/books/"]').waitFor({ timeout: SHOWN_MS });
      expect(await page.getByLabel('API key').count()).toBe(0);
      expect(errors).toEqual([]);
    });
    await page.context().close();
  });
});
