// Finds and runs the chaos scenarios: used by scripts/chaos/run.mjs (the
// command) and test/src/chaos-quick.test.ts (the quick variants in npm test).
//
// A scenario is scripts/chaos/scenarios/rNN-short-name.mjs exporting
//   id ('R1'), title (the fault), target (the figure to reach) and
//   async run({ quick, seed, workDir, log }) → { pass, figure, details? }
// `workDir` is a fresh directory for its data directories and history files:
// deleted when the scenario passes, kept (and reported) when it fails or throws.
// A scenario with no quick variant (its smallest run is over ~20 s: a whole
// cluster started and faulted) also exports fullOnly, saying why; a quick
// run reports it skipped.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './lib.mjs';

export const SCENARIO_DIR = join(ROOT, 'scripts/chaos/scenarios');
const SCENARIO_FILE = /^r(\d{2})-[a-z0-9-]+\.mjs$/;

/** Scenario file names, in id order. */
export function scenarioFiles() {
  return readdirSync(SCENARIO_DIR).filter((f) => SCENARIO_FILE.test(f)).sort();
}

/** The scenario modules, in id order; `only` (ids such as 'R1') keeps those. */
export async function loadScenarios(only) {
  const wanted = only === undefined ? undefined : new Set(only.map((id) => id.toUpperCase()));
  const modules = [];
  for (const file of scenarioFiles()) {
    const mod = await import(pathToFileURL(join(SCENARIO_DIR, file)).href);
    for (const key of ['id', 'title', 'target', 'run']) {
      if (mod[key] === undefined) throw new Error(`${file} does not export ${key}`);
    }
    if (wanted === undefined || wanted.has(mod.id)) modules.push({ file, ...mod });
  }
  return modules;
}

/**
 * Run one scenario in a fresh work directory. Never throws: a scenario that
 * throws, or that has not settled in `limitMs` (a bound of the runner's own, in
 * case the scenario's fails), is a failure whose figure says why.
 */
export async function runScenario(scenario, { quick, seed, log, limitMs = quick ? 180_000 : 4 * 3600_000 }) {
  if (quick && scenario.fullOnly !== undefined) {
    return { id: scenario.id, title: scenario.title, target: scenario.target, file: scenario.file, pass: true, skipped: true,
      figure: `no quick variant: ${scenario.fullOnly}`, ms: 0, keptWorkDir: null };
  }
  const workDir = mkdtempSync(join(tmpdir(), `tessera-chaos-${scenario.id.toLowerCase()}-`));
  const startedAt = Date.now();
  let result;
  let timer;
  try {
    const limit = new Promise((res) => {
      timer = setTimeout(() => res({ pass: false, figure: `no result within ${limitMs} ms (runner's bound)` }), limitMs);
    });
    result = await Promise.race([scenario.run({ quick, seed, workDir, log }), limit]);
    if (typeof result?.pass !== 'boolean' || typeof result.figure !== 'string') {
      result = { pass: false, figure: `bad result: ${JSON.stringify(result)}` };
    }
  } catch (err) {
    log(`threw: ${err?.stack ?? err}`);
    result = { pass: false, figure: `threw: ${err?.message ?? err}` };
  } finally {
    clearTimeout(timer);
  }
  const ms = Date.now() - startedAt;
  if (result.pass) rmSync(workDir, { recursive: true, force: true });
  return { id: scenario.id, title: scenario.title, target: scenario.target, file: scenario.file, ...result, ms, keptWorkDir: result.pass ? null : workDir };
}
