#!/usr/bin/env node
// The reliability suite (docs/reliability.md): runs the chaos scenarios in
// scripts/chaos/scenarios/ in id order, printing each one's figure, PASS or
// FAIL and time, then the table; exits 1 if any failed. A failed scenario's
// work directory (data directories, history files) is kept and printed.
//
//   node scripts/chaos/run.mjs [--quick] [--only R1,R13] [--seed N] [--write-docs]
//
// --quick runs the small variants (what npm test runs, through
// test/src/chaos-quick.test.ts); --write-docs (what `npm run test:chaos`
// does) writes the full run's rows into docs/reliability.md between the
// reliability markers, keeping the rows of scenarios this run did not run.
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from './lib.mjs';
import { loadScenarios, runScenario } from './runner.mjs';

/** A scenario that could not set its fault up (R11 without a tmpfs) says so: skipped, never a pass. */
const verdict = (r) => (r.skipped ? 'SKIPPED' : r.pass ? 'PASS' : 'FAIL');

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    seed: { type: 'string', default: String(Date.now() % 1_000_000) },
    'write-docs': { type: 'boolean', default: false },
  },
});
const seed = Number(values.seed);
if (!Number.isInteger(seed)) throw new Error(`--seed must be an integer, not ${values.seed}`);
if (values.quick && values['write-docs']) throw new Error('--write-docs publishes full-run figures: run it without --quick');

const DOC = join(ROOT, 'docs/reliability.md');
const START = '<!-- reliability:start -->';
const END = '<!-- reliability:end -->';
const LIST_START = '<!-- reliability-scenarios:start -->';
const LIST_END = '<!-- reliability-scenarios:end -->';
const machine = `${cpus().length} cores, Node ${process.version}`;
const date = new Date().toISOString().slice(0, 10);

const scenarios = await loadScenarios(values.only?.split(',').map((s) => s.trim()).filter(Boolean));
if (scenarios.length === 0) throw new Error(`no scenario matches --only ${values.only}`);
console.log(`reliability suite: ${scenarios.length} scenario(s), ${values.quick ? 'quick' : 'full'}, seed ${seed}, ${machine}`);

const results = [];
for (const scenario of scenarios) {
  console.log(`\n== ${scenario.id}: ${scenario.title} (target: ${scenario.target})`);
  const result = await runScenario(scenario, {
    quick: values.quick,
    seed,
    log: (line) => console.log(`   ${scenario.id} ${line}`),
  });
  results.push(result);
  console.log(`== ${result.id} ${verdict(result)} in ${(result.ms / 1000).toFixed(1)} s: ${result.figure}`);
  if (result.keptWorkDir) console.log(`   work directory kept: ${result.keptWorkDir}`);
}

const cell = (text) => String(text).replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
const row = (r) => `| ${r.id} | ${cell(r.title)} | ${cell(r.target)} | ${cell(r.figure)} | ${r.skipped ? 'skipped' : r.pass ? 'pass' : '**FAIL**'} | ${(r.ms / 1000).toFixed(0)} s | seed ${seed}, ${date}, ${machine} |`;
const HEADER = ['| id | fault | target | figure | result | time | run |', '|---|---|---|---|---|---|---|'];
console.log(`\n${[...HEADER, ...results.map(row)].join('\n')}`);

/** `text` with what lies between the markers `start` and `end` replaced by `lines` (the markers kept). */
function replaceBetween(text, start, end, lines) {
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${DOC} lacks the ${start} … ${end} markers`);
  return text.slice(0, from) + [start, ...lines, end].join('\n') + text.slice(to + end.length);
}

if (values['write-docs']) {
  let text = readFileSync(DOC, 'utf8');
  // Rows of scenarios not run this time stay as they were, with their own run column.
  const rows = new Map();
  for (const line of text.slice(text.indexOf(START), text.indexOf(END)).split('\n')) {
    const id = /^\| (R\d+) \|/.exec(line)?.[1];
    if (id !== undefined) rows.set(id, line);
  }
  for (const r of results) rows.set(r.id, row(r));
  const ordered = [...rows.entries()].sort(([a], [b]) => Number(a.slice(1)) - Number(b.slice(1))).map(([, line]) => line);
  text = replaceBetween(text, START, END, [
    `Written by \`npm run test:chaos\` (scripts/chaos/run.mjs --write-docs); last run ${date}, seed ${seed}, ${machine}${values.only ? `, only ${values.only}` : ''}. Do not edit by hand.`,
    '',
    ...HEADER,
    ...ordered,
  ]);
  // Every scenario module there is, run or not: its file says how it works.
  const all = await loadScenarios();
  text = replaceBetween(text, LIST_START, LIST_END, ['| id | fault | scenario |', '|---|---|---|',
    ...all.map((m) => `| ${m.id} | ${cell(m.title)} | [scripts/chaos/scenarios/${m.file}](../scripts/chaos/scenarios/${m.file}) |`)]);
  writeFileSync(DOC, text);
  console.log(`\nwrote ${results.length} row(s) into ${DOC}`);
}

process.exitCode = results.every((r) => r.pass) ? 0 : 1;
