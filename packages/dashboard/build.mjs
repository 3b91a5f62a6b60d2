#!/usr/bin/env node
/**
 * Bundles the browser app (app/main.tsx: Preact, uPlot and the styles) with
 * esbuild into dist/public/: app-<hash>.js, app-<hash>.css and the
 * index.html that names them. Hashed names let the server cache them for a
 * year; nothing is fetched at run time. Run by the root `npm run build`
 * (and so by `npm start`, `npm test`, `npm install`); type checking is
 * `tsc -b` (app/tsconfig.json).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const out = here('dist/public/');

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const result = await build({
  // Paths in the bundle and its source map relative to this package: the same build wherever it is run from.
  absWorkingDir: here('.'),
  entryPoints: { app: here('app/main.tsx') },
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  sourcemap: 'linked',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  entryNames: '[name]-[hash]',
  outdir: out,
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
});
const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
outputs.push(writeLicenses(Object.keys(result.metafile.inputs)));
const script = outputs.find((name) => name.endsWith('.js'));
const style = outputs.find((name) => name.endsWith('.css'));
writeFileSync(`${out}index.html`, `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tessera dashboard</title>
<link rel="stylesheet" href="/.dashboard/${style}">
<script type="module" src="/.dashboard/${script}"></script>
</head>
<body>
<div id="app"></div>
<!-- Bundled libraries and their licenses: /.dashboard/${outputs.find((name) => name.startsWith('licenses-'))} -->
<noscript>The Tessera dashboard needs JavaScript. The API itself is at this address (docs/dashboard.md).</noscript>
</body>
</html>
`);
console.log(`dashboard: ${[...outputs, 'index.html'].join(', ')} in ${out}`);

/**
 * The licenses of the packages bundled (Preact, uPlot: MIT, whose notice
 * must go with every copy), in one text file named by its content.
 */
function writeLicenses(inputs) {
  // Each bundled package's directory, as the metafile names its files (relative to absWorkingDir).
  const dirs = new Map(inputs.flatMap((path) => {
    const match = /^(.*node_modules\/((?:@[^/]+\/)?[^/]+)\/)/.exec(path);
    return match === null ? [] : [[match[2], resolve(here('.'), match[1])]];
  }));
  const text = [...dirs.keys()].sort().map((name) => {
    const dir = `${dirs.get(name)}/`;
    const { version, license } = JSON.parse(readFileSync(`${dir}package.json`, 'utf8'));
    const file = ['LICENSE', 'LICENSE.md', 'LICENSE.txt'].map((f) => `${dir}${f}`).find((f) => existsSync(f));
    return `${name} ${version} (${license})\n\n${file === undefined ? '' : readFileSync(file, 'utf8').trim()}\n`;
  }).join('\n---\n\n');
  const name = `licenses-${createHash('sha256').update(text).digest('hex').slice(0, 8).toUpperCase()}.txt`;
  writeFileSync(`${out}${name}`, text);
  return name;
}
