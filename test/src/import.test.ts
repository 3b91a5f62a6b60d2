/** `tessera import` against the real server: bad lines, exit codes, reruns, SIGKILL midway, gzip, stdin, MessagePack. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { encode } from '@msgpack/msgpack';
import { runCli, startCli } from './cli-process.js';
import { call, removeDir, startServer, tempDataDir, type Server } from './harness.js';

let server: Server;
let dir: string;

beforeAll(async () => {
  server = await startServer();
  dir = tempDataDir('tessera-import-');
});

afterAll(async () => {
  await server.stop();
  removeDir(server.dataDir);
  removeDir(dir);
});

function importFile(file: string, index: string, extra: string[] = []) {
  return runCli(['import', file, '--index', index, '--url', server.url, ...extra]);
}

async function count(index: string): Promise<number> {
  await call(server, 'COMMIT', index);
  return (await call(server, 'INFO', index)).json.doc_count as number;
}

/** The `FILE:LINE` of each error line on stderr, as numbers, sorted. */
function reportedLines(stderr: string, file: string): number[] {
  return [...stderr.matchAll(new RegExp(`^${file.replace(/\./g, '\\.')}:(\\d+): `, 'gm'))].map((m) => Number(m[1])).sort((a, b) => a - b);
}

it('bad lines are reported with their line numbers, the rest is loaded, the exit code is 1; a rerun is idempotent', async () => {
  const lines: string[] = [];
  for (let i = 1; i <= 300; i++) lines.push(JSON.stringify({ _id: i, n: i, title: `document ${i}` }));
  // 1-based line numbers of the file: broken JSON, not an object, a wrong type, blank lines in between.
  lines[16] = '{"_id": 17, "n": ';
  lines[49] = 'this is not json';
  lines[79] = '[1, 2, 3]';
  lines[119] = JSON.stringify({ _id: 120, n: 'one hundred and twenty' });
  lines[200] = '   ';
  lines[201] = '';
  const file = join(dir, 'mixed.ndjson');
  writeFileSync(file, `${lines.join('\n')}\n`);

  const first = await importFile(file, '/imp-mixed/', ['--batch', '37']);
  expect(first.code).toBe(1);
  expect(reportedLines(first.stderr, 'mixed.ndjson')).toEqual([17, 50, 80, 120]);
  expect(first.stderr).toMatch(/^mixed\.ndjson:80: Bad Request: A RESTORE item must be an object$/m);
  expect(first.stdout).toMatch(/^imported 294 of 298 documents from mixed\.ndjson into \/imp-mixed\/ .*; 4 failed$/m);
  expect(await count('/imp-mixed/')).toBe(294);
  expect((await call(server, 'GET', '/imp-mixed/300')).json).toMatchObject({ n: 300, _version: 1 });

  // Same file again: same documents, none twice, versions moved on.
  const again = await importFile(file, '/imp-mixed/', ['--batch', '37', '--concurrency', '3']);
  expect(again.code).toBe(1);
  expect(reportedLines(again.stderr, 'mixed.ndjson')).toEqual([17, 50, 80, 120]);
  expect(await count('/imp-mixed/')).toBe(294);
  expect((await call(server, 'GET', '/imp-mixed/300')).json).toMatchObject({ n: 300, _version: 2 });
}, 60_000);

it('an import killed with SIGKILL midway, run again, ends with every document exactly once', async () => {
  const total = 30_000;
  const file = join(dir, 'big.ndjson');
  writeFileSync(file, Array.from({ length: total }, (_, i) => JSON.stringify({ _id: `doc-${i}`, i, text: `line ${i} of the big file` })).join('\n'));
  const { child, done } = startCli(['import', file, '--index', '/imp-killed/', '--url', server.url, '--batch', '100', '--concurrency', '1']);
  // Kill it once part of the file is in.
  let loaded = 0;
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    const info = await call(server, 'INFO', '/imp-killed/');
    loaded = info.status === 200 ? info.json.doc_count as number : 0;
    if (loaded >= 1000) break;
    await new Promise((res) => setTimeout(res, 20));
  }
  child.kill('SIGKILL');
  const killed = await done;
  expect(killed.signal).toBe('SIGKILL');
  const partial = await count('/imp-killed/');
  expect(partial).toBeGreaterThanOrEqual(1000);
  expect(partial).toBeLessThan(total);

  const rerun = await importFile(file, '/imp-killed/', ['--batch', '1000', '--quiet']);
  expect(rerun.code).toBe(0);
  expect(rerun.stderr).toBe('');
  expect(await count('/imp-killed/')).toBe(total);
  const last = await call(server, 'GET', `/imp-killed/doc-${total - 1}`);
  expect(last.json).toMatchObject({ i: total - 1, _version: 1 });
  // A document loaded before the kill was replaced, not duplicated.
  expect((await call(server, 'COUNT', '/imp-killed/', { _query: { i: 0 } })).json.total).toBe(1);
}, 120_000);

it('reads gzip, recognised by its magic bytes whatever the name, and standard input (-)', async () => {
  const docs = Array.from({ length: 50 }, (_, i) => JSON.stringify({ _id: i, kind: 'gz' })).join('\n');
  const named = join(dir, 'docs.ndjson.gz');
  writeFileSync(named, gzipSync(docs));
  const unnamed = join(dir, 'docs-gzipped.ndjson');
  writeFileSync(unnamed, gzipSync(docs.replace(/"gz"/g, '"magic"')));
  const a = await importFile(named, '/imp-gz/');
  expect(a.code).toBe(0);
  expect(a.stdout).toMatch(/imported 50 of 50 documents/);
  const b = await importFile(unnamed, '/imp-gz-magic/');
  expect(b.code).toBe(0);
  expect(await count('/imp-gz/')).toBe(50);
  expect((await call(server, 'GET', '/imp-gz-magic/7')).json.kind).toBe('magic');

  const stdin = await runCli(['import', '-', '--index', '/imp-stdin/', '--url', server.url],
    { input: gzipSync('{"_id": 1, "via": "stdin"}\n{"_id": 2, "via": "stdin"}\n{broken\n') });
  expect(stdin.code).toBe(1);
  expect(stdin.stderr).toMatch(/^<stdin>:3: Bad Request: /m);
  expect(await count('/imp-stdin/')).toBe(2);
}, 60_000);

it('reads a MessagePack sequence; a bad item is reported by its position', async () => {
  const items = [{ _id: 'a', n: 1 }, { _id: 'b', n: 2 }, 'not a document', { _id: 'c', n: 3 }, { _id: 'd', n: 'four' }, { _id: 'e', n: 5 }];
  const file = join(dir, 'docs.msgpack');
  writeFileSync(file, Buffer.concat(items.map((item) => Buffer.from(encode(item)))));
  const r = await importFile(file, '/imp-msgpack/', ['--batch', '2']);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/^docs\.msgpack: item 3: Bad Request: A RESTORE item must be an object$/m);
  expect(r.stderr).toMatch(/^docs\.msgpack: item 5: Bad Request: /m);
  expect(r.stdout).toMatch(/imported 4 of 6 documents/);
  expect((await call(server, 'GET', '/imp-msgpack/e')).json.n).toBe(5);

  // A truncated last value is reported; what came before is loaded.
  const truncated = join(dir, 'cut.msgpack');
  const whole = Buffer.concat([encode({ _id: 'x', n: 1 }), encode({ _id: 'y', n: 2 })].map((b) => Buffer.from(b)));
  writeFileSync(truncated, whole.subarray(0, whole.length - 3));
  const cut = await importFile(truncated, '/imp-msgpack-cut/');
  expect(cut.code).toBe(1);
  expect(cut.stderr).toMatch(/^cut\.msgpack: item 2: truncated/m);
  expect(await count('/imp-msgpack-cut/')).toBe(1);
}, 60_000);

it('a server that is not there, or an index name it refuses: exit 2 and nothing read', async () => {
  const file = join(dir, 'one.ndjson');
  writeFileSync(file, '{"a": 1}\n');
  const down = await runCli(['import', file, '--index', '/x/', '--url', 'http://127.0.0.1:1']);
  expect(down.code).toBe(2);
  expect(down.stderr).toMatch(/cannot reach the server at http:\/\/127\.0\.0\.1:1: .*ECONNREFUSED/);
  const badName = await importFile(file, '/bad*name/');
  expect(badName.code).toBe(2);
  expect(badName.stderr).toMatch(/the server refuses \/bad\*name\/: Bad Request: /);
  const missing = await importFile(join(dir, 'nope.ndjson'), '/x/');
  expect(missing.code).toBe(2);
  expect(missing.stderr).toMatch(/cannot read .*nope\.ndjson/);
});

it('without a terminal, prints a progress line every --progress-interval seconds', async () => {
  const file = join(dir, 'progress.ndjson');
  writeFileSync(file, Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ _id: i, text: `progress ${i}` })).join('\n'));
  const r = await importFile(file, '/imp-progress/', ['--batch', '200', '--concurrency', '1', '--progress-interval', '1']);
  expect(r.code).toBe(0);
  const progress = r.stderr.split('\n').filter((l) => l.startsWith('import: '));
  // 100 requests one after another take well over a second: at least one line, each with documents, rate, errors, share read, ETA.
  expect(progress.length).toBeGreaterThan(0);
  for (const line of progress) expect(line).toMatch(/^import: \d+ docs, \d+ docs\/s, 0 errors, \d+% of \d+\.\d MiB done(, ETA \d+ s)?$/);
  const quiet = await importFile(file, '/imp-progress/', ['--quiet', '--progress-interval', '1']);
  expect(quiet.stderr).toBe('');
  expect(await count('/imp-progress/')).toBe(20_000);
}, 120_000);
