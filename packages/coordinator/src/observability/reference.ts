/**
 * The metrics list of docs/operations.md (between its `metrics-reference`
 * markers), generated from a fresh Metrics registry so the page cannot drift
 * from the code: a test compares the two.
 */
import { Metrics } from './metrics.js';

interface Described {
  name: string;
  help: string;
  type?: string;
  labelNames?: readonly string[];
  get?: () => Promise<{ type: string }>;
}

export async function metricsReference(): Promise<string> {
  const metrics = new Metrics();
  const rows: string[] = [];
  const described = metrics.registry.getMetricsAsArray() as unknown as Described[];
  // Tessera's own first, then prom-client's process metrics; alphabetical within each.
  const rank = (m: Described) => (m.name.startsWith('tessera_') ? 0 : 1);
  for (const m of [...described].sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name))) {
    // prom-client's own metrics carry their type as a property; the custom ones report it from get().
    const type = m.type ?? (await m.get?.())?.type ?? 'untyped';
    const labels = (m.labelNames ?? []).map((l) => `\`${l}\``).join(', ');
    rows.push(`| \`${m.name}\` | ${type} | ${labels} | ${m.help.replace(/\|/g, '\\|')} |`);
  }
  return ['| metric | type | labels | what |', '|---|---|---|---|', ...rows].join('\n');
}
