/**
 * A strict parser of the Prometheus text exposition format 0.0.4 (what
 * `/:metrics` serves), for tests: it throws, naming the line, on anything a
 * Prometheus server would reject or that breaks the format's rules — bad
 * names, label syntax or escapes, values, a TYPE after its samples or
 * twice, a family's samples split by another family, a sample outside its
 * declared family, duplicate series, histogram buckets that are not
 * increasing and cumulative or whose `+Inf` bucket differs from `_count`,
 * summary samples without a quantile.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string | undefined;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const finished = new Set<string>();
  let current: Family | undefined;
  const seen = new Set<string>();
  /** Families with a TYPE line. */
  const typeSet = new Set<string>();
  if (text.length > 0 && !text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  const lines = text.split('\n');
  lines.pop();
  lines.forEach((line, i) => {
    const where = `line ${i + 1} (${JSON.stringify(line)})`;
    const fail = (why: string): never => { throw new Error(`${where}: ${why}`); };
    if (line.trim() === '') return;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) ([^ ]+)(?: (.*))?$/.exec(line);
      if (m === null) return; // a plain comment
      const [, keyword, name, rest = ''] = m as unknown as [string, string, string, string | undefined];
      if (!METRIC_NAME.test(name) || METRIC_NAME.exec(name)?.[0] !== name) fail(`bad metric name '${name}'`);
      const family = enter(name);
      if (keyword === 'TYPE') {
        if (!TYPES.has(rest)) fail(`unknown type '${rest}'`);
        if (family.samples.length > 0) fail('TYPE after the family\'s samples');
        if (family.type !== 'untyped' || typeSet.has(name)) fail('second TYPE line');
        typeSet.add(name);
        family.type = rest as Family['type'];
      } else {
        if (family.help !== undefined) fail('second HELP line');
        family.help = unescapeHelp(rest, fail);
      }
      return;
    }
    const sample = parseSample(line, fail);
    const familyName = familyOf(sample.name);
    const family = enter(familyName);
    const suffix = sample.name.slice(familyName.length);
    switch (family.type) {
      case 'histogram':
        if (!['_bucket', '_sum', '_count'].includes(suffix)) fail(`'${sample.name}' is not a sample of histogram ${familyName}`);
        if (suffix === '_bucket' && sample.labels.le === undefined) fail('bucket without an le label');
        break;
      case 'summary':
        if (!['', '_sum', '_count'].includes(suffix)) fail(`'${sample.name}' is not a sample of summary ${familyName}`);
        if (suffix === '' && sample.labels.quantile === undefined) fail('summary sample without a quantile label');
        break;
      default:
        if (suffix !== '') fail(`'${sample.name}' is not a sample of ${family.type} ${familyName}`);
        if (family.type === 'counter' && !(sample.value >= 0)) fail('a counter is negative');
    }
    const key = `${sample.name}{${Object.keys(sample.labels).sort().map((k) => `${k}=${sample.labels[k]}`).join(',')}}`;
    if (seen.has(key)) fail(`duplicate series ${key}`);
    seen.add(key);
    family.samples.push(sample);
  });
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;

  function enter(name: string): Family {
    if (current?.name === name) return current;
    if (current !== undefined) finished.add(current.name);
    if (finished.has(name)) throw new Error(`family ${name} continues after another family started`);
    const family: Family = { name, type: 'untyped', help: undefined, samples: [] };
    families.set(name, family);
    current = family;
    return family;
  }

  /** The family a sample belongs to: the current one when its name extends it (histogram/summary suffixes), else itself. */
  function familyOf(name: string): string {
    if (current !== undefined && (current.type === 'histogram' || current.type === 'summary')) {
      for (const suffix of ['_bucket', '_sum', '_count', '']) {
        if (name === `${current.name}${suffix}`) return current.name;
      }
    }
    return name;
  }
}


function parseSample(line: string, fail: (why: string) => never): Sample {
  let rest = line;
  const name = METRIC_NAME.exec(rest)?.[0];
  if (name === undefined) fail('bad metric name');
  rest = rest.slice(name.length);
  const labels: Record<string, string> = {};
  if (rest.startsWith('{')) {
    rest = rest.slice(1);
    for (;;) {
      if (rest.startsWith('}')) break;
      const label = LABEL_NAME.exec(rest)?.[0];
      if (label === undefined) fail('bad label name');
      if (label.startsWith('__')) fail(`reserved label name '${label}'`);
      rest = rest.slice(label.length);
      if (!rest.startsWith('="')) fail(`label ${label} without ="value"`);
      rest = rest.slice(2);
      let value = '';
      for (;;) {
        const c = rest[0];
        if (c === undefined) fail('unterminated label value');
        if (c === '"') break;
        if (c === '\n') fail('raw newline in a label value');
        if (c === '\\') {
          const e = rest[1];
          if (e === '\\') value += '\\';
          else if (e === '"') value += '"';
          else if (e === 'n') value += '\n';
          else fail(`bad escape \\${e ?? ''} in a label value`);
          rest = rest.slice(2);
        } else {
          value += c;
          rest = rest.slice(1);
        }
      }
      rest = rest.slice(1);
      if (Object.prototype.hasOwnProperty.call(labels, label)) fail(`label ${label} twice`);
      labels[label] = value;
      if (rest.startsWith(',')) rest = rest.slice(1);
      else if (!rest.startsWith('}')) fail('expected , or } after a label');
    }
    rest = rest.slice(1);
  }
  const m = /^ ([^ ]+)(?: (-?\d+))?$/.exec(rest);
  if (m === null) fail('expected " value [timestamp]" after the name and labels');
  return { name, labels, value: parseValue((m as RegExpExecArray)[1] as string, fail) };
}

function parseValue(text: string, fail: (why: string) => never): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (text === 'NaN') return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) fail(`bad value '${text}'`);
  return Number(text);
}

function unescapeHelp(text: string, fail: (why: string) => never): string {
  return text.replace(/\\(.?)/g, (_, e: string) => {
    if (e === '\\') return '\\';
    if (e === 'n') return '\n';
    return fail(`bad escape \\${e} in HELP`);
  });
}

/** Per series (labels without le): bounds increase, counts are cumulative, +Inf is last and equals _count. */
function checkHistogram(family: Family): void {
  const series = new Map<string, { buckets: Array<[number, number]>; count?: number }>();
  const keyOf = (labels: Record<string, string>) =>
    Object.keys(labels).filter((k) => k !== 'le').sort().map((k) => `${k}=${labels[k]}`).join(',');
  for (const s of family.samples) {
    const key = keyOf(s.labels);
    let entry = series.get(key);
    if (entry === undefined) series.set(key, entry = { buckets: [] });
    if (s.name.endsWith('_bucket')) entry.buckets.push([s.labels.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(s.labels.le), s.value]);
    else if (s.name.endsWith('_count')) entry.count = s.value;
  }
  for (const [key, { buckets, count }] of series) {
    const where = `${family.name}{${key}}`;
    if (buckets.length === 0) throw new Error(`${where}: no buckets`);
    for (let i = 0; i < buckets.length; i++) {
      const [le, n] = buckets[i] as [number, number];
      if (Number.isNaN(le)) throw new Error(`${where}: le is not a number`);
      if (i > 0) {
        const [prevLe, prevN] = buckets[i - 1] as [number, number];
        if (!(le > prevLe)) throw new Error(`${where}: le ${le} after ${prevLe}`);
        if (n < prevN) throw new Error(`${where}: bucket le=${le} has ${n} < ${prevN}: not cumulative`);
      }
    }
    const [lastLe, lastN] = buckets[buckets.length - 1] as [number, number];
    if (lastLe !== Number.POSITIVE_INFINITY) throw new Error(`${where}: no +Inf bucket`);
    if (count === undefined || count !== lastN) throw new Error(`${where}: _count ${String(count)} differs from the +Inf bucket ${lastN}`);
  }
}

/** The value of the one sample named `name` whose labels include `labels`; throws when there are several, or none and no `absent` value is given. */
export function valueOf(families: Map<string, Family>, name: string, labels: Record<string, string> = {}, absent?: number): number {
  const matches: Sample[] = [];
  for (const family of families.values()) {
    for (const s of family.samples) {
      if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) matches.push(s);
    }
  }
  if (matches.length === 0 && absent !== undefined) return absent;
  if (matches.length !== 1) throw new Error(`${matches.length} samples ${name}${JSON.stringify(labels)}`);
  return (matches[0] as Sample).value;
}
