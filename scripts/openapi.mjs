#!/usr/bin/env node
/**
 * docs/openapi.json: the OpenAPI 3.1 document `GET /.openapi` serves,
 * generated from the coordinator's route table (packages/coordinator/src/api/).
 *   node scripts/openapi.mjs           print it
 *   node scripts/openapi.mjs --write   write docs/openapi.json (after `npx tsc -b`)
 * test/src/openapi.test.ts fails when the checked-in file differs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { openApiDocument } from '@tessera/coordinator';

const root = new URL('../', import.meta.url);
const { version } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
const text = `${JSON.stringify(openApiDocument(version), null, 2)}\n`;
if (process.argv.includes('--write')) {
  writeFileSync(new URL('docs/openapi.json', root), text);
  console.log('wrote docs/openapi.json');
} else {
  process.stdout.write(text);
}
