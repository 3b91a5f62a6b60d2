#!/usr/bin/env node
// Benchmark (prints, never asserts): bulk indexing of the whole Debian corpus
// (63,440 records) through RESTORE into a fresh `tessera serve`, with the peers'
// workload (../shared/bench/peers/README.md): id = line number, one text field
// `text` = package + summary + description, keyword `section`, integer
// `installed_size`. Prints docs/s, on-disk size and the server's peak RSS.
// Compare with `bash ../shared/bench/peers/run.sh xapian` in the same session.
//   npx tsc -b && node scripts/bench/index-debian.mjs
import { spawn, execSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const corpus = join(root, '../shared/data/debian-packages.ndjson.gz');
const data = mkdtempSync(join(tmpdir(), 'tessera-bench-'));
const server = spawn(process.execPath, [...(process.env.SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean), join(root, 'packages/cli/dist/main.js'), 'serve', '--port', '0', '--data', data, '--log-level', 'info'], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise((res) => {
  let buf = '';
  server.stdout.on('data', (d) => {
    buf += d;
    const m = buf.match(/"msg":"listening".*?|"port":(\d+).*"msg":"listening"/);
    const line = buf.split('\n').find((l) => l.includes('"listening"'));
    if (line) res(JSON.parse(line).port);
  });
});
server.stdout.resume();
const url = `http://127.0.0.1:${port}`;
let peakRss = 0;
const rssTimer = setInterval(() => {
  try { peakRss = Math.max(peakRss, Number(execSync(`ps -o rss= -p ${server.pid}`).toString().trim()) * 1024); } catch { /* exited */ }
}, 200);

const lines = gunzipSync(readFileSync(corpus)).toString('utf8').split('\n').filter((l) => l.length > 0);
const docs = lines.map((line, i) => {
  const d = JSON.parse(line);
  return JSON.stringify({ _id: i, text: [d.package, d.summary, d.description].filter(Boolean).join('\n'), section: d.section ?? '', installed_size: d.installed_size ?? 0 });
});
await request(`${url}/debian/`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({
  _settings: { number_of_shards: 1, number_of_replicas: 0 },
  _schema: { text: { _type: 'text', _index: 'field_terms' }, section: { _type: 'keyword' }, installed_size: { _type: 'integer' } },
}) }).then((r) => r.body.dump());

const started = process.hrtime.bigint();
async function* chunks() {
  for (let i = 0; i < docs.length; i += 2000) yield Buffer.from(docs.slice(i, i + 2000).join('\n') + '\n');
}
const res = await request(`${url}/debian/?commit`, { method: 'RESTORE', headers: { 'content-type': 'application/x-ndjson' }, body: Readable.from(chunks()) });
const report = await res.body.json();
await request(`${url}/debian/`, { method: 'COMMIT' }).then((r) => r.body.dump());
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const count = await request(`${url}/debian/`, { method: 'COUNT' }).then((r) => r.body.json());
clearInterval(rssTimer);
server.kill('SIGTERM');
await new Promise((r) => server.once('exit', r));
const bytes = Number(execSync(`du -sb ${data}`).toString().split('\t')[0]);
rmSync(data, { recursive: true, force: true });
let commit = 'unknown';
try { commit = execSync('git rev-parse --short HEAD', { cwd: root }).toString().trim(); } catch { /* not a checkout */ }
console.log(`Node ${process.version}, ${cpus().length} cores, commit ${commit}`);
console.log(`indexed ${report.indexed}/${report.total} documents (COUNT ${count.total}) in ${seconds.toFixed(2)} s: ${Math.round(report.indexed / seconds)} docs/s`);
console.log(`on disk after shutdown: ${(bytes / 1048576).toFixed(1)} MiB; server peak RSS ${(peakRss / 1048576).toFixed(0)} MiB`);
