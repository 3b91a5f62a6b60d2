// R5 — SIGSTOP of a primary past its lease, then SIGCONT.
//
// Method: a real etcd, two coordinators and three nodes on loopback; an
// index of 4 shards with 1 replica. Each round, under writes (two writers
// per shard through the coordinators, every fourth write an overwrite of one
// of 5 hot IDs of the shard; the round's IDs are its own), a seeded node
// holding primaries is SIGSTOPped: its primary lease (3 s) runs out, the
// elected coordinator's heartbeat (5 s) declares it lost and promotes a
// replica of each of its shards under term + 1. A seeded 0.5–3 s after the
// last promotion it is SIGCONTed, with whatever was queued for it as primary
// still in its sockets; writes go on 3 s more, then every copy must be in
// sync again. A write acknowledged under the old term once the new one
// began would be missing from the new primary's history, or share a
// version with a write of the new term: checked each round through every
// coordinator (every acknowledged write readable at its version, with its
// own body, or a later one; no version acknowledged twice), and that each
// of its shards was promoted once, under the next term, to another node,
// while it was stopped, and not back after. At the end the cluster is
// stopped cleanly and every copy of every shard is read from disk with the
// engine: each must equal its primary's, which must hold every
// acknowledged write.
// Figure: writes acknowledged under the old term (lost or sharing a
// version), of those acknowledged on its shards after the promotion.
// Full only (6 rounds, ~3 min): a round waits out the lease and the
// heartbeat (test/src/coordinators-faults.test.ts covers one in npm test).
import { join } from 'node:path';
import { pick, random, sleep, startCluster, waitFor } from '../lib.mjs';
import {
  allocationOf, converged, createReplicatedIndex, lostThroughEach, sharedVersions, startWriteLoad, stopAndCompareCopies,
} from '../replicated-writes.mjs';

export const id = 'R5';
export const title = 'SIGSTOP of a primary past its lease, then SIGCONT (2 coordinators, etcd, 3 nodes)';
export const target = '0 writes acknowledged under the old primary term';
export const fullOnly = 'a 5-process cluster and etcd; a round waits out a 5 s heartbeat';

const INDEX = '/r5/';
const SHARDS = 4;
const ROUNDS = 6;
/** Far above the lease (3 s) and heartbeat timeout (5 s) a promotion waits for. */
const PROMOTION_MAX_MS = 30_000;

/** The 'shard primary promoted' lines every coordinator logged, not in `before`. */
function promotions(cluster, before = new Set()) {
  return [...cluster.coordinators.values()].flatMap((c) => c.logs.filter((l) => l.msg === 'shard primary promoted' && l.index === INDEX && !before.has(l)));
}

export async function run({ seed, workDir, log }) {
  const rand = random(seed);
  const dataDir = join(workDir, 'cluster');
  const cluster = await startCluster({ dataDir, nodes: 3, coordinators: 2 });
  const acks = [];
  const problems = [];
  let failures = 0;
  let afterPromotion = 0;
  let inFlightAcrossStop = 0;
  /** Each shard's primary term as the promotions went (a new index starts at 1). */
  const terms = new Map();
  let lost = 0;
  let onDisk;
  let shared = [];
  try {
    await createReplicatedIndex(cluster, INDEX, SHARDS);
    for (let round = 0; round < ROUNDS; round++) {
      const load = startWriteLoad(cluster, INDEX, { shards: SHARDS, seed: seed * 1000 + round, prefix: `r${round}-` });
      const before = new Set(promotions(cluster));
      let victim;
      let affected = [];
      let stoppedAt = Infinity;
      let promotedAt = Infinity;
      let continuedAt = Infinity;
      try {
        await sleep(1000 + Math.floor(rand() * 2000));
        const allocation = await allocationOf(cluster, INDEX);
        victim = pick(rand, [...new Set(allocation.map((copies) => copies[0]))].sort());
        affected = allocation.flatMap((copies, i) => (copies[0] === victim ? [i + 1] : []));
        const node = cluster.nodes.get(victim);
        stoppedAt = Date.now();
        process.kill(node.pid, 'SIGSTOP');
        try {
          const promoted = await waitFor(() => affected.every((shard) => promotions(cluster, before).some((l) => l.shard === shard)),
            { timeoutMs: PROMOTION_MAX_MS, everyMs: 20 });
          promotedAt = Date.now();
          if (promoted === null) problems.push(`round ${round + 1}: shard(s) ${affected.join(', ')} of ${victim} not all promoted within ${PROMOTION_MAX_MS} ms of its SIGSTOP`);
          log(`round ${round + 1}: SIGSTOP of ${victim} (primary of shard(s) ${affected.join(', ')}); promoted ${((promotedAt - stoppedAt) / 1000).toFixed(2)} s after: `
            + promotions(cluster, before).map((l) => `#${l.shard} → ${l.promoted} term ${l.term}`).join(', '));
          await sleep(500 + Math.floor(rand() * 2500));
        } finally {
          continuedAt = Date.now();
          process.kill(node.pid, 'SIGCONT');
        }
        await sleep(3000);
      } finally {
        await load.stop();
        acks.push(...load.acks);
        failures += load.failures;
      }
      const changes = promotions(cluster, before);
      for (const shard of affected) {
        const of = changes.filter((l) => l.shard === shard);
        const term = terms.get(shard) ?? 1;
        if (of.length !== 1 || of[0].lost !== victim || of[0].promoted === victim || of[0].term !== term + 1) {
          problems.push(`round ${round + 1}: shard ${shard} (term ${term}) promoted ${of.length} time(s): ${JSON.stringify(of.map((l) => [l.lost, l.promoted, l.term]))}`);
        }
        terms.set(shard, Math.max(term, ...of.map((l) => l.term)));
      }
      const late = changes.filter((l) => !affected.includes(l.shard));
      if (late.length > 0) problems.push(`round ${round + 1}: promotions of shards ${victim} did not lead: ${JSON.stringify(late.map((l) => [l.shard, l.lost, l.promoted, l.term]))}`);
      // From the first promotion as the coordinator logged it (pino's `time`): a write made again there is answered at once.
      const firstPromotion = Math.min(promotedAt, ...changes.map((l) => l.time));
      const roundAfter = load.acks.filter((a) => a.ackedAt > firstPromotion && affected.includes(a.shard)).length;
      afterPromotion += roundAfter;
      // Sent to the old primary before its stop and held across it (answered over 1 s after: once the new primary took over,
      // a little before the coordinator logs the promotion): each must have been made again there.
      const acrossStop = load.acks.filter((a) => a.sentAt < stoppedAt && a.ackedAt > stoppedAt + 1000 && affected.includes(a.shard)).length;
      inFlightAcrossStop += acrossStop;
      if (roundAfter === 0) problems.push(`round ${round + 1}: no write acknowledged on ${victim}'s shards after their promotion`);
      const synced = await converged(cluster, INDEX, 60_000);
      if (synced.ms === null) problems.push(`round ${round + 1}: copies not in sync 60 s after the SIGCONT: ${JSON.stringify(synced.copies)}`);
      const now = await allocationOf(cluster, INDEX);
      const back = affected.filter((shard) => now[shard - 1][0] === victim);
      if (back.length > 0) problems.push(`round ${round + 1}: ${victim} primary again of shard(s) ${back.join(', ')} after its SIGCONT`);
      const missing = await lostThroughEach(cluster, INDEX, load.acks);
      lost += missing.size;
      problems.push(...[...missing.values()].slice(0, 5).map((line) => `round ${round + 1}: lost ${line}`));
      log(`round ${round + 1}: ${load.acks.length} writes acknowledged (${roundAfter} on its shards after the promotion, ${acrossStop} of them sent before the stop), ${load.failures} not; `
        + `continued ${((continuedAt - promotedAt) / 1000).toFixed(1)} s after the promotion; ${lost} lost so far`);
    }
    shared = sharedVersions(acks);
    problems.push(...shared.slice(0, 5).map((line) => `version acknowledged twice: ${line}`));
    onDisk = await stopAndCompareCopies(cluster, dataDir, INDEX, acks);
    problems.push(...onDisk.examples);
  } finally {
    for (const node of cluster.nodes.values()) if (node.child.exitCode === null && node.child.signalCode === null) process.kill(node.pid, 'SIGCONT');
    await cluster.kill();
  }
  for (const line of problems) log(line);
  const differ = Object.values(onDisk.counts).reduce((a, b) => a + b, 0);
  return {
    pass: problems.length === 0,
    figure: `${lost + shared.length} writes acknowledged under the old primary term (${lost} lost, ${shared.length} versions acknowledged twice) `
      + `in ${ROUNDS} rounds of a primary's node SIGSTOPped past its lease until promoted, then SIGCONTed; ${acks.length} writes acknowledged `
      + `(${afterPromotion} on its shards after the promotion, ${inFlightAcrossStop} of them in flight at the stop; ${failures} not acknowledged); on disk ${differ} of ${onDisk.compared} replica documents differ from their primary's`,
    details: { acknowledged: acks.length, afterPromotion, inFlightAcrossStop, failures, lost, shared: shared.length, onDisk: onDisk.counts, problems },
  };
}
