/**
 * docs/errors.md lists every error `code` the code base can produce, with its
 * status, so the page clients branch on cannot drift from the catalogues.
 * The codes are read from the sources: every `new TesseraError('code', status`
 * and catalogue helper `e('code', status` (packages/…/errors.ts and any other
 * site), and the codec catalogue's `CODEC_ERROR_STATUS` table.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './harness.js';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** code → statuses, from every package's sources. */
function catalogueCodes(): Map<string, Set<number>> {
  const codes = new Map<string, Set<number>>();
  const add = (code: string, status: number): void => {
    if (!codes.has(code)) codes.set(code, new Set());
    codes.get(code)!.add(status);
  };
  const packages = join(REPO_ROOT, 'packages');
  for (const pkg of readdirSync(packages)) {
    for (const file of sourceFiles(join(packages, pkg, 'src'))) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:new TesseraError|\be)\(\s*'([a-z][a-z0-9_]*)',\s*(\d{3})\b/g)) add(m[1]!, Number(m[2]));
      const table = /CODEC_ERROR_STATUS = \{([^}]*)\}/.exec(text);
      if (table !== null) for (const m of table[1]!.matchAll(/^\s*([a-z][a-z0-9_]*): (\d{3}),/gm)) add(m[1]!, Number(m[2]));
    }
  }
  return codes;
}

/** code → the status cell of its row in docs/errors.md. */
function documentedCodes(): Map<string, string> {
  const doc = readFileSync(join(REPO_ROOT, 'docs/errors.md'), 'utf8');
  const rows = new Map<string, string>();
  for (const line of doc.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 4 || !cells[1]!.startsWith('`')) continue;
    for (const m of cells[1]!.matchAll(/`([a-z][a-z0-9_]*)`/g)) rows.set(m[1]!, cells[2]!);
  }
  return rows;
}

describe('docs/errors.md', () => {
  const codes = catalogueCodes();
  const documented = documentedCodes();

  it('the scan finds the catalogues (a sanity floor, so a broken pattern cannot pass vacuously)', () => {
    for (const code of ['version_conflict', 'http_headers_timeout', 'body_malformed', 'method_not_allowed', 'rpc_timeout', 'invalid_geo']) {
      expect(codes.has(code)).toBe(true);
    }
    expect(codes.size).toBeGreaterThan(80);
  });

  it('lists every code the code base can produce, with its status', () => {
    const missing = [...codes.keys()].filter((code) => !documented.has(code)).sort();
    expect(missing).toEqual([]);
    const wrongStatus = [...codes].flatMap(([code, statuses]) => [...statuses]
      .filter((status) => !documented.get(code)!.split(/[^0-9]+/).includes(String(status)))
      .map((status) => `${code} ${status} (docs: ${documented.get(code)})`));
    expect(wrongStatus).toEqual([]);
  });

  it('lists no code the code base cannot produce', () => {
    expect([...documented.keys()].filter((code) => !codes.has(code)).sort()).toEqual([]);
  });
});
