/** `tessera serve` configuration: config file (JSON5, YAML), TESSERA_* variables, flags, their precedence and validation. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configReference, resolveConfig, SETTINGS, shardWorkersOf } from '@tessera/cli';
import { runCli } from './cli-process.js';
import { call, REPO_ROOT, removeDir, startServer, tempDataDir } from './harness.js';

let dir: string;

beforeEach(() => {
  dir = tempDataDir('tessera-config-');
});

afterEach(() => {
  removeDir(dir);
});

/** The one `starting` line: the effective configuration and where each value came from. */
function startingLine(logs: Array<Record<string, unknown>>) {
  const lines = logs.filter((l) => l.msg === 'starting');
  expect(lines).toHaveLength(1);
  return lines[0] as { config: Record<string, unknown>; sources: Record<string, string>; configFile?: string };
}

it('a YAML config file sets the settings it names (data relative to the file); the rest keep their defaults', async () => {
  const file = join(dir, 'tessera.yaml');
  writeFileSync(file, [
    '# the embedded server',
    'port: 0',
    'data: ./store',
    'body-bytes-max: 64',
    'slowRequestMs: 5000',
    'logLevel: info',
  ].join('\n'));
  const server = await startServer({ dataDir: join(dir, 'store'), args: ['--config', file] });
  try {
    const { config, sources, configFile } = startingLine(server.logs);
    expect(configFile).toBe(file);
    expect(config).toMatchObject({ port: 0, data: join(dir, 'store'), bodyBytesMax: 64, slowRequestMs: 5000, depthMax: 128 });
    expect(sources).toMatchObject({ port: 'file', data: 'file', bodyBytesMax: 'file', slowRequestMs: 'file', depthMax: 'default', shards: 'default' });
    // Every setting is in the line, once.
    expect(Object.keys(config).sort()).toEqual(SETTINGS.filter((s) => s.commands.includes('serve')).map((s) => s.key).sort());
    // And the values are the ones in force.
    expect((await call(server, 'PUT', '/conf/1', { a: 'x'.repeat(100) })).status).toBe(413);
    expect((await call(server, 'PUT', '/conf/2', { a: 1 })).status).toBe(200);
    expect(existsSync(join(dir, 'store', 'cluster-state.json'))).toBe(true);
  } finally {
    expect(await server.stop()).toBe(0);
  }
});

it('precedence: flag > TESSERA_* environment > JSON5 config file > default', async () => {
  const file = join(dir, 'tessera.json5');
  writeFileSync(file, `{
    // JSON5: comments, unquoted and kebab-case keys, trailing commas
    slowRequestMs: 111,
    'body-bytes-max': 100,
    depthMax: 5,
  }`);
  const server = await startServer({
    args: ['--port', '0', '--data', join(dir, 'data'), '--config', file, '--slow-request-ms', '333'],
    env: { TESSERA_SLOW_REQUEST_MS: '222', TESSERA_BODY_BYTES_MAX: '200' },
  });
  try {
    const { config, sources } = startingLine(server.logs);
    expect(config).toMatchObject({ slowRequestMs: 333, bodyBytesMax: 200, depthMax: 5, fieldsMax: 10_000 });
    expect(sources).toMatchObject({ slowRequestMs: 'flag', bodyBytesMax: 'env', depthMax: 'file', fieldsMax: 'default', port: 'flag' });
    // The environment's 200 bytes is the body limit in force, not the file's 100.
    expect((await call(server, 'PUT', '/prec/1', { a: 'x'.repeat(130) })).status).toBe(200);
    expect((await call(server, 'PUT', '/prec/2', { a: 'x'.repeat(250) })).status).toBe(413);
    // The file's depth limit is in force: 6 levels of nesting are refused.
    expect((await call(server, 'PUT', '/prec/3', { a: { b: { c: { d: { e: { f: 1 } } } } } })).status).toBe(400);
  } finally {
    await server.stop();
  }
});

it('TESSERA_CONFIG names the config file; --print-config prints the effective configuration', async () => {
  const file = join(dir, 'tessera.yml');
  writeFileSync(file, 'shards: 3\nname: alpha\n');
  const r = await runCli(['serve', '--print-config', '--name', 'beta'], { env: { TESSERA_CONFIG: file } });
  expect(r.code).toBe(0);
  const config = JSON.parse(r.stdout) as Record<string, unknown>;
  expect(config).toMatchObject({ shards: 3, name: 'beta', port: 8880, logLevel: 'info' });
});

it('an unknown key or a wrong type in the file: exit 2, each named with the file, nothing started', async () => {
  const file = join(dir, 'bad.yaml');
  writeFileSync(file, 'port: eighty\nbodyBytesMaxx: 5\nbody-bytes-max: 10\nbodyBytesMax: 20\ndata: ./d\n');
  const r = await runCli(['serve', '--config', file]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain(`${file}: 'port': expected an integer from 0 to 65535, got string "eighty"`);
  expect(r.stderr).toContain(`${file}: unknown key 'bodyBytesMaxx' (did you mean 'bodyBytesMax'?)`);
  expect(r.stderr).toContain(`${file}: 'body-bytes-max' and 'bodyBytesMax' set the same setting`);
  expect(existsSync(join(dir, 'd'))).toBe(false);
  expect(r.stdout).not.toContain('"starting"');
});

it('a bad environment value, an unparseable file, a missing file, an unknown file type: readable errors, exit 2', async () => {
  const env = await runCli(['serve', '--print-config'], { env: { TESSERA_DEPTH_MAX: 'deep' } });
  expect(env.code).toBe(2);
  expect(env.stderr).toContain('TESSERA_DEPTH_MAX=deep: expected an integer from 1 to 100000');

  const broken = join(dir, 'broken.json');
  writeFileSync(broken, '{ "port": 1,, }');
  const parse = await runCli(['serve', '--config', broken]);
  expect(parse.code).toBe(2);
  expect(parse.stderr).toMatch(new RegExp(`${broken.replace(/[.]/g, '\\.')}: JSON5: invalid character ',' at 1:13`));

  const missing = await runCli(['serve', '--config', join(dir, 'nope.yaml')]);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('nope.yaml: cannot read the config file');

  const toml = join(dir, 'tessera.toml');
  writeFileSync(toml, 'port = 1');
  const type = await runCli(['serve', '--config', toml]);
  expect(type.code).toBe(2);
  expect(type.stderr).toContain("unknown config file type '.toml'");

  const list = join(dir, 'list.yaml');
  writeFileSync(list, '- port: 1\n');
  const notMapping = await runCli(['serve', '--config', list]);
  expect(notMapping.code).toBe(2);
  expect(notMapping.stderr).toContain('expected a mapping of settings');
});

it('limits that contradict each other are refused, naming both and where they came from', async () => {
  const file = join(dir, 'limits.json');
  writeFileSync(file, '{"headerBytesMax": 1024}');
  const r = await runCli(['serve', '--config', file, '--url-bytes-max', '2048', '--print-config']);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('urlBytesMax (2048, from flag) must not exceed headerBytesMax (1024, from file)');
  const bodies = await runCli(['coordinator', '--bodies-bytes-max', String(32 << 20), '--print-config']);
  expect(bodies.code).toBe(2);
  expect(bodies.stderr).toContain(`bodyBytesMax (${64 << 20}, from default) must not exceed bodiesBytesMax (${32 << 20}, from flag)`);
  expect(bodies.stderr).toContain(`contentBodyBytesMax (${100 << 20}, from default) must not exceed bodiesBytesMax`);
});

it('shardWorkers: a count or auto, from a flag, a variable or the file; auto is one per core up to the shards, none below 3 cores', () => {
  const resolve = (env: Record<string, string>, values: Record<string, unknown> = {}) =>
    resolveConfig({ flags: {}, env, file: { path: '/etc/tessera.yaml', values } }).config.shardWorkers;
  expect(resolve({})).toBe(0);
  expect(resolve({ TESSERA_SHARD_WORKERS: '4' })).toBe(4);
  expect(resolve({ TESSERA_SHARD_WORKERS: 'auto' }, { shardWorkers: 2 })).toBe('auto');
  expect(resolve({}, { shardWorkers: 0 })).toBe(0);
  expect(() => resolve({ TESSERA_SHARD_WORKERS: 'many' })).toThrow('TESSERA_SHARD_WORKERS=many: expected an integer from 0 to 256 or auto');
  expect(() => resolve({}, { shardWorkers: 'all' })).toThrow(`'shardWorkers': expected an integer from 0 to 256 or auto`);
  expect(shardWorkersOf(3, 5, 2)).toBe(3);
  expect(shardWorkersOf('auto', 5, 2)).toBe(0);
  expect(shardWorkersOf('auto', 5, 16)).toBe(5);
  expect(shardWorkersOf('auto', 32, 16)).toBe(16);
});

it('docs/operations.md lists every setting, as generated from the schema', () => {
  const doc = readFileSync(join(REPO_ROOT, 'docs/operations.md'), 'utf8');
  const table = /<!-- config-reference:start -->\n([\s\S]*?)\n<!-- config-reference:end -->/.exec(doc)?.[1];
  // Regenerate with: node --input-type=module -e "import('@tessera/cli').then((m) => console.log(m.configReference()))"
  expect(table).toBe(configReference());
});

it('a flag with a bad value names the flag', async () => {
  const r = await runCli(['serve', '--log-level', 'loud', '--print-config']);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toMatch(/--log-level/);
});
