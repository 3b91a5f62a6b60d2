// The `fuzzy` group of scripts/bench/search.mjs (prints, never asserts):
// fuzzy words on the Debian index the peers' groups use (`{"text": "w~N"}`,
// top 10 by weight). Each query is a word of 4–12 letters drawn from a
// corpus document with a seeded generator (SEED, default 42), given one typo
// (a substitution, deletion, insertion or transposition), searched at edit
// distance 1 or 2 alternately, so runs compare. One warm-up pass, one timed
// pass, on the benchmark's keep-alive connection.
import { random } from './bench-lib.mjs';

export const FUZZY_QUERIES = 500;

function typo(word, rnd) {
  const i = Math.floor(rnd() * word.length);
  const letter = 'abcdefghijklmnopqrstuvwxyz'[Math.floor(rnd() * 26)];
  switch (Math.floor(rnd() * 4)) {
    case 0: return word.slice(0, i) + letter + word.slice(i + 1);
    case 1: return word.slice(0, i) + word.slice(i + 1);
    case 2: return word.slice(0, i) + letter + word.slice(i);
    default: return i + 1 < word.length ? word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2) : letter + word;
  }
}

/** The group's request bodies, drawn from `docs` (the NDJSON lines RESTORE received, each with a `text`). */
export function fuzzyBodies(docs, seed = Number(process.env.SEED ?? 42)) {
  const rnd = random(seed);
  const bodies = [];
  while (bodies.length < FUZZY_QUERIES) {
    const { text } = JSON.parse(docs[Math.floor(rnd() * docs.length)]);
    const words = String(text ?? '').toLowerCase().match(/\b[a-z]{4,12}\b/g) ?? [];
    if (words.length === 0) continue;
    const word = typo(words[Math.floor(rnd() * words.length)], rnd);
    bodies.push(JSON.stringify({ _query: { text: `${word}~${1 + (bodies.length % 2)}` }, _limit: 10 }));
  }
  return bodies;
}

/**
 * Run the group: `search(body)` sends one SEARCH on the benchmark's
 * connection and resolves with `{ status, value }`; `tookUs` reads a reply's
 * `took`. Resolves with client latencies and server `took`s, in µs.
 */
export async function runFuzzyGroup(docs, search, tookUs) {
  const bodies = fuzzyBodies(docs);
  const check = (reply, body) => {
    if (reply.status >= 300) throw new Error(`fuzzy query ${body} answered ${reply.status}: ${JSON.stringify(reply.value)}`);
    return reply.value;
  };
  for (const body of bodies) check(await search(body), body);
  const lat = [];
  const took = [];
  let matches = 0;
  for (const body of bodies) {
    const start = process.hrtime.bigint();
    const value = check(await search(body), body);
    lat.push(Number(process.hrtime.bigint() - start) / 1000);
    took.push(tookUs(value.took));
    matches += value.total;
  }
  return { lat, took, meanTotal: matches / bodies.length };
}
