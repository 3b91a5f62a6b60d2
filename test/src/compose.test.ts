/**
 * docker-compose.yml, checked without Docker: its services, ports, volumes
 * and health checks agree with each other, and every command parses with the
 * real `tessera` program (flags, environment, required settings) into the
 * configuration the file relies on.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildProgram, type CommandName, type ResolvedConfig, SERVER_ENV, SERVER_NODE_FLAGS } from '@tessera/cli';
import { parse as parseYaml } from 'yaml';
import { REPO_ROOT } from './harness.js';

interface Service {
  image?: string;
  command?: string[];
  ports?: string[];
  expose?: string[];
  volumes?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}

const compose = parseYaml(readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8')) as { services: Record<string, Service>; volumes: Record<string, unknown> };
const services = compose.services;
const NODES = ['node1', 'node2', 'node3'];
const CLI_SCRIPT = 'packages/cli/dist/main.js';

/** A service's command run through the real program: which command it is, and its resolved configuration. */
async function parsed(name: string): Promise<{ command: CommandName; resolved: ResolvedConfig<CommandName> }> {
  const argv = services[name]!.command!;
  // The server processes run with the flags every launcher passes (packages/cli/src/node-flags.ts).
  expect(argv.slice(0, 2 + SERVER_NODE_FLAGS.length)).toEqual(['node', ...SERVER_NODE_FLAGS, CLI_SCRIPT]);
  // …and the malloc settings of the same file.
  expect(services[name]!.environment).toMatchObject(SERVER_ENV);
  let seen: { command: CommandName; resolved: ResolvedConfig<CommandName> } | undefined;
  const capture = (command: CommandName) => async (resolved: ResolvedConfig<CommandName>) => { seen = { command, resolved }; };
  const program = buildProgram({
    env: services[name]!.environment ?? {},
    exitOverride: true,
    run: { serve: capture('serve'), coordinator: capture('coordinator'), node: capture('node') },
  });
  await program.parseAsync(['node', 'tessera', ...argv.slice(2 + SERVER_NODE_FLAGS.length)]);
  expect(seen).toBeDefined();
  return seen!;
}

/** The named volume a service mounts at `path`. */
function volumeAt(service: Service, path: string): string | undefined {
  return service.volumes?.map((v) => v.split(':')).find(([, target]) => target === path)?.[0];
}

it('describes a coordinator and three nodes, built once before they start', () => {
  expect(Object.keys(services).sort()).toEqual(['build', 'coordinator', ...NODES]);
  expect(services.build!.command).toEqual(expect.arrayContaining(['npm', 'ci']));
  for (const name of ['coordinator', ...NODES]) {
    expect(services[name]!.image).toBe(services.build!.image);
    expect(services[name]!.volumes).toContain('./:/app');
    expect(services[name]!.depends_on?.build).toEqual({ condition: 'service_completed_successfully' });
  }
  // The script the commands run is what `tsc -b` (npm ci's prepare) builds.
  expect(existsSync(join(REPO_ROOT, CLI_SCRIPT))).toBe(true);
});

it('the coordinator command parses; its ports, volume and health check match its configuration', async () => {
  const { command, resolved } = await parsed('coordinator');
  expect(command).toBe('coordinator');
  const config = resolved.config as ResolvedConfig<'coordinator'>['config'];
  expect(config).toMatchObject({ host: '0.0.0.0', rpcHost: '0.0.0.0' });
  const service = services.coordinator!;
  expect(service.ports).toEqual([`${config.port}:${config.port}`]);
  expect(service.expose).toEqual([String(config.rpcPort)]);
  const volume = volumeAt(service, config.data);
  expect(volume).toBeDefined();
  expect(compose.volumes).toHaveProperty(volume!);
  expect(service.healthcheck!.test.join(' ')).toContain(`http://127.0.0.1:${config.port}/healthz`);
});

it('each node command parses, joins the coordinator\'s RPC port by its service name, and has its own name and volume', async () => {
  const coordinator = (await parsed('coordinator')).resolved.config as ResolvedConfig<'coordinator'>['config'];
  const volumes = new Set<string>([volumeAt(services.coordinator!, coordinator.data)!]);
  for (const name of NODES) {
    const { command, resolved } = await parsed(name);
    expect(command).toBe('node');
    const config = resolved.config as ResolvedConfig<'node'>['config'];
    expect(config.name).toBe(name);
    expect(config.join).toBe(`ws://coordinator:${coordinator.rpcPort}`);
    const service = services[name]!;
    expect(service.ports).toBeUndefined();
    const volume = volumeAt(service, config.data)!;
    expect(compose.volumes).toHaveProperty(volume);
    expect(volumes.has(volume)).toBe(false);
    volumes.add(volume);
    expect(service.depends_on?.coordinator).toEqual({ condition: 'service_healthy' });
    // Healthy = the coordinator (reached by its service name and HTTP port) shows this node active.
    const check = service.healthcheck!.test.join(' ');
    expect(check).toContain(`http://coordinator:${coordinator.port}/.nodes`);
    expect(check).toContain(`n.name === '${name}' && n.active`);
  }
});

it('a command the program refuses fails the check (the parse is real)', async () => {
  const quiet = () => buildProgram({ env: {}, exitOverride: true, output: { writeErr: () => undefined }, run: { node: async () => undefined } });
  await expect(quiet().parseAsync(['node', 'tessera', 'node', '--join', 'http://coordinator:8890', '--name', 'x'])).rejects.toThrow(/expected (a URL|one or more URLs)/);
  await expect(quiet().parseAsync(['node', 'tessera', 'node', '--join', 'ws://coordinator:8890'])).rejects.toThrow(/needs a name/);
  await expect(quiet().parseAsync(['node', 'tessera', 'node', '--name', 'x', '--port', '8880'])).rejects.toThrow(/unknown option '--port'/);
});
