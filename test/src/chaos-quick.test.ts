/**
 * The reliability suite's quick variants (docs/reliability.md): every
 * scenario module under scripts/chaos/scenarios/ runs its small variant here,
 * each in its own test, and must reach its figure (those with no quick
 * variant, `fullOnly`, are listed as skipped). The full variants run with
 * `npm run test:chaos`. A failing scenario keeps its work directory (data
 * directories, history files) and the failure names it.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from './harness.js';

// The runner is plain JavaScript (scripts/chaos/runner.mjs), shared with `node scripts/chaos/run.mjs`.
const runner = await import(pathToFileURL(join(REPO_ROOT, 'scripts/chaos/runner.mjs')).href);
const scenarios: Array<{ id: string; title: string; file: string; fullOnly?: string }> = await runner.loadScenarios();
/** Fixed, so a failure in CI reproduces with `node scripts/chaos/run.mjs --quick --seed 23 --only ID`. */
const SEED = Number(process.env.TESSERA_CHAOS_SEED ?? 23);

it('finds the scenario modules', () => {
  expect(scenarios.length).toBeGreaterThan(0);
});

for (const scenario of scenarios) {
  // A scenario without a quick variant (a whole cluster, over ~20 s) runs only with `npm run test:chaos`.
  (scenario.fullOnly === undefined ? it : it.skip)(`${scenario.id} (${scenario.file}, quick): ${scenario.title}`, async () => {
    const lines: string[] = [];
    const result = await runner.runScenario(scenario, { quick: true, seed: SEED, log: (line: string) => lines.push(line) });
    if (!result.pass) {
      throw new Error(`${scenario.id} failed (seed ${SEED}): ${result.figure}\nwork directory kept: ${result.keptWorkDir}\n`
        + `last log lines:\n${lines.slice(-20).join('\n')}`);
    }
  }, 200_000);
}
