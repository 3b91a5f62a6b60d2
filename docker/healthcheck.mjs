// The image's HEALTHCHECK (Dockerfile): liveness of the `tessera` process the
// container runs, whichever command it is.
//
//   node docker/healthcheck.mjs [--listed-by URL[,URL…]] [--pid PID]
//
// Exit 0: healthy, 1: not. `serve` and `coordinator` are healthy while
// `GET /healthz` answers 200 on 127.0.0.1 at their HTTP port: `--port N` /
// `-p N` of their command line, else TESSERA_PORT, else 8880. A shard node
// (`tessera node`) has no HTTP and serves only its coordinators: without
// `--listed-by` all Docker can know of it is that it runs, and it is healthy
// while the process lives; with `--listed-by` (coordinators' HTTP URLs, as
// docker-compose.yml gives its nodes) it is healthy once one of them lists
// it (its `--name`, else TESSERA_NODE_NAME) active in `/.nodes`, asked with
// `Authorization: Bearer $TESSERA_API_KEY` when that is set (the
// coordinators' master key: /.nodes needs it, /healthz does not). One script
// for every command, so that `docker run tessera node …` is not reported
// unhealthy forever, nor restarted by a supervisor for lacking an HTTP port
// it was never meant to have.
//
// The process is PID 1 (the ENTRYPOINT, exec form), or a child of PID 1 when
// the container runs with an init (`docker run --init`). Its command line is
// read from /proc: `node … packages/cli/dist/main.js <command> …` at first,
// `tessera <command> …` once it has set its title (spaces, not NULs, then).
import { readFileSync } from 'node:fs';

const DEFAULT_PORT = 8880;
const TIMEOUT_MS = 2000;

function argvOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]+/).filter((a) => a !== '');
  } catch {
    return undefined;
  }
}

/** The tessera command line below the interpreter: [command, ...arguments], or undefined. */
function tesseraArgs(argv) {
  if (argv === undefined) return undefined;
  if (argv[0] === 'tessera') return argv.slice(1);
  const script = argv.findIndex((a) => /(^|\/)(main|tessera)\.js$/.test(a));
  return script < 0 ? undefined : argv.slice(script + 1);
}

function childrenOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter((p) => p.trim() !== '');
  } catch {
    return [];
  }
}

/** The value of a flag (`--flag V`, `--flag=V`, or `-s V`), or undefined. */
function flagOf(args, long, short) {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === long || (short !== undefined && a === short)) return args[i + 1];
    if (a.startsWith(`${long}=`)) return a.slice(long.length + 1);
  }
  return undefined;
}

function nonEmpty(text) {
  return text === undefined || text === '' ? undefined : text;
}

/** The coordinators' master key, when the container has one (docs/security.md). */
const API_KEY = nonEmpty(process.env.TESSERA_API_KEY);

async function get(url) {
  try {
    const headers = API_KEY === undefined ? {} : { authorization: `Bearer ${API_KEY}` };
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(TIMEOUT_MS) });
    if (!response.ok) throw new Error(`${response.status}`);
    return await response.json();
  } catch (err) {
    throw new Error(`${url}: ${err.cause?.code ?? err.message}`);
  }
}

/** Whether any of the coordinators lists the node active. */
async function listed(coordinators, name) {
  const answers = await Promise.allSettled(coordinators.map((c) => get(`${c.replace(/\/+$/, '')}/.nodes`)));
  for (const a of answers) {
    if (a.status === 'fulfilled' && Array.isArray(a.value) && a.value.some((n) => n.name === name && n.active === true)) return true;
  }
  for (const a of answers) console.error(a.status === 'rejected' ? a.reason.message : `${name} is not listed active`);
  return false;
}

const own = process.argv.slice(2);
const pid = flagOf(own, '--pid') ?? '1';
const args = [pid, ...childrenOf(pid)].map((p) => tesseraArgs(argvOf(p))).find((a) => a !== undefined) ?? [];
let healthy;
if (args[0] === 'node') {
  const coordinators = nonEmpty(flagOf(own, '--listed-by'))?.split(',') ?? [];
  const name = flagOf(args, '--name') ?? nonEmpty(process.env.TESSERA_NODE_NAME);
  healthy = coordinators.length === 0 || (name !== undefined && await listed(coordinators, name));
} else {
  const port = nonEmpty(flagOf(args, '--port', '-p')) ?? nonEmpty(process.env.TESSERA_PORT) ?? DEFAULT_PORT;
  healthy = await get(`http://127.0.0.1:${port}/healthz`).then(() => true, (err) => (console.error(err.message), false));
}
process.exit(healthy ? 0 : 1);
