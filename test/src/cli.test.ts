/** The `tessera serve` command line: flags, environment, limits, graceful stop, `npm start`. */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { call, REPO_ROOT, removeDir, startServer, tempDataDir } from './harness.js';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function waitForHttp(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const r = await request(url);
      await r.body.dump();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((res) => setTimeout(res, 100));
    }
  }
}

it('TESSERA_PORT and TESSERA_DATA choose the port and data directory; flags win over them', async () => {
  const port = await freePort();
  const dataDir = tempDataDir();
  const server = await startServer({ dataDir, args: [], env: { TESSERA_PORT: String(port), TESSERA_DATA: dataDir } });
  try {
    expect(server.port).toBe(port);
    await call(server, 'PUT', '/env/1', { a: 1 });
    expect(existsSync(join(dataDir, 'cluster-state.json'))).toBe(true);
  } finally {
    expect(await server.stop()).toBe(0);
  }
  const other = tempDataDir();
  const flagged = await startServer({ args: ['--port', '0', '--data', other], env: { TESSERA_PORT: String(port), TESSERA_DATA: dataDir } });
  try {
    expect(flagged.port).not.toBe(port);
    expect((await call(flagged, 'GET', '/env/1')).status).toBe(404);
  } finally {
    await flagged.stop();
    removeDir(dataDir);
    removeDir(other);
  }
});

it('limits are configurable: a body over --body-bytes-max is a 413 and nothing is written', async () => {
  const server = await startServer({ args: ['--port', '0', '--data', tempDataDir(), '--body-bytes-max', '64'] });
  try {
    expect((await call(server, 'PUT', '/lim/1', { a: 'x'.repeat(100) })).status).toBe(413);
    expect((await call(server, 'PUT', '/lim/2', { a: 1 })).status).toBe(200);
    expect((await call(server, 'GET', '/lim/1')).status).toBe(404);
  } finally {
    await server.stop();
    removeDir(server.dataDir);
  }
});

it('a bad option is refused with a readable message and a non-zero exit', async () => {
  const child = spawn(process.execPath, [join(REPO_ROOT, 'packages/cli/dist/main.js'), 'serve', '--port', 'eighty'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  const code = await new Promise<number | null>((res) => child.once('exit', res));
  expect(code).not.toBe(0);
  expect(stderr).toMatch(/--port/);
});

it('SIGTERM lets in-flight writes finish and exits 0; every acknowledged write is there after restart', async () => {
  const server = await startServer();
  const writes = Array.from({ length: 200 }, (_, i) => call(server, 'PUT', `/term/${i}`, { i }));
  await writes[0];
  const stopped = server.stop();
  const settled = await Promise.allSettled(writes);
  expect(await stopped).toBe(0);
  await server.waitForLog((l) => l.msg === 'stopped');
  const acked = settled.flatMap((r, i) => (r.status === 'fulfilled' && r.value.status === 200 ? [i] : []));
  expect(acked.length).toBeGreaterThan(0);
  for (const r of settled) if (r.status === 'fulfilled') expect(r.value.status).toBe(200);
  const again = await startServer({ dataDir: server.dataDir, args: ['--port', '0', '--data', server.dataDir] });
  try {
    for (const i of acked) expect((await call(again, 'GET', `/term/${i}`)).json.i).toBe(i);
  } finally {
    await again.stop();
    removeDir(server.dataDir);
  }
});

it('npm start -- --port N --data DIR starts the server', async () => {
  const port = await freePort();
  const dataDir = tempDataDir();
  const child = spawn('npm', ['start', '--silent', '--', '--port', String(port), '--data', dataDir], {
    cwd: REPO_ROOT, detached: true, stdio: 'ignore',
  });
  try {
    await waitForHttp(`http://127.0.0.1:${port}/`, 60_000);
    const r = await call({ url: `http://127.0.0.1:${port}` }, 'PUT', '/npm/1', { ok: true });
    expect(r.status).toBe(200);
    expect(existsSync(join(dataDir, 'cluster-state.json'))).toBe(true);
  } finally {
    process.kill(-child.pid!, 'SIGTERM');
    await new Promise((res) => child.once('exit', res));
    removeDir(dataDir);
  }
}, 90_000);
