/**
 * A headless Chromium for the browser tests, driven by playwright-core:
 * Debian's `chromium` package (not a browser Playwright downloads), installed
 * with apt-get when missing and this process is root (as CI runs,
 * scripts/apt-install.mjs); anyone else is told to install it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { REPO_ROOT } from './harness.js';

/** Where a failing browser test leaves its screenshots (ignored by git: /results/). */
export const SCREENSHOT_DIR = join(REPO_ROOT, 'results', 'browser');

function chromiumPath(): string | undefined {
  for (const name of ['chromium', 'chromium-browser']) {
    const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
    if (found !== '') return found;
  }
  return undefined;
}

/** Debian's chromium, installed first when missing (may take minutes: give the caller's hook a long timeout). */
export async function launchChromium(): Promise<Browser> {
  let path = chromiumPath();
  if (path === undefined) {
    const { aptInstall } = (await import(join(REPO_ROOT, 'scripts/apt-install.mjs'))) as { aptInstall(pkg: string, what: string): void };
    aptInstall('chromium', 'chromium (for the dashboard browser test)');
    path = chromiumPath();
    if (path === undefined) throw new Error('chromium was installed but is not on PATH');
  }
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: path, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/**
 * Run `body` with a page; when it throws, a full-page screenshot is written
 * to SCREENSHOT_DIR/<name>.png and the error says where.
 */
export async function withScreenshotOnFailure(page: Page, name: string, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (err) {
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    const file = join(SCREENSHOT_DIR, `${name}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
    if (err instanceof Error) err.message = `${err.message}\n(screenshot of the page: ${file}; screenshots in ${SCREENSHOT_DIR})`;
    throw err;
  }
}
