#!/usr/bin/env node
/**
 * Bundles the browser app (app/main.tsx: Preact, uPlot and the styles) with
 * esbuild into dist/public/: app-<hash>.js, app-<hash>.css and the
 * index.html that names them. Hashed names let the server cache them for a
 * year; nothing is fetched at run time. Run by the root `npm run build`
 * (and so by `npm start`, `npm test`, `npm install`); type checking is
 * `tsc -b` (app/tsconfig.json).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const out = here('dist/public/');

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const result = await build({
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
  legalComments: 'linked',
  logLevel: 'warning',
});
const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
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
<noscript>The Tessera dashboard needs JavaScript. The API itself is at this address (docs/dashboard.md).</noscript>
</body>
</html>
`);
console.log(`dashboard: ${[...outputs, 'index.html'].join(', ')} in ${out}`);
