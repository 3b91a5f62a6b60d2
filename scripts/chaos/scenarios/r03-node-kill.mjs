// R3 — kill -9 of a shard node under replicated writes, 3 nodes.
//
// Method: the cluster as `scripts/cluster --etcd --coordinators 2 --nodes 3`
// runs it (a real etcd, two coordinators with their default lease, three
// nodes, all on loopback); an index of 4 shards with 1 replica. Each round,
// two writers per shard PUT through the coordinators in turn (moving to the
// other one when theirs does not answer): new IDs, and every fourth write
// an overwrite of one of 5 hot IDs of the shard. After a seeded 1–3 s, a
// node holding primaries (a seeded one of them) is SIGKILLed — in one
// seeded round the elected coordinator too, at the same moment. Writes go
// on until each of the node's shards (every shard, in the coordinator round)
// took a write sent after the kill, then 1 s more; the killed coordinator is
// started again meanwhile, the node after the writes stop, and every copy
// must be in sync again (60 s). Checked each round, through every
// coordinator: every acknowledged write readable at its version (with its
// own body) or a later one; no two writes acknowledged with one version. At
// the end, the cluster stopped cleanly, every copy of every shard is read
// from disk with the engine and must equal its primary's, which must hold
// every acknowledged write.
// Figure: writes lost, and the longest time a shard took no write across a
// kill (the longest gap between its acknowledgements, or from the kill to
// the first acknowledgement of a write sent after it); target 0 lost, ≤ 10 s.
// Full only (8 rounds, ~5 min): one round alone, the cluster's start
// included, takes ~50 s on 2 cores (test/src/coordinators-faults.test.ts
// covers the node kill in npm test).
import { join } from 'node:path';
import { pick, random, sleep, startCluster, waitFor } from '../lib.mjs';
import {
  allocationOf, converged, createReplicatedIndex, lostThroughEach, sharedVersions, startWriteLoad, stopAndCompareCopies,
} from '../replicated-writes.mjs';

export const id = 'R3';
export const title = 'kill -9 of a shard node under replicated writes, 3 nodes (in one round the elected coordinator too; 2 coordinators, etcd)';
export const target = '0 lost, unavailability ≤ 10 s (the round with the elected coordinator killed too included)';
export const fullOnly = 'a 5-process cluster and etcd, ~35 s a round';

const INDEX = '/r3/';
const SHARDS = 4;
const UNAVAILABLE_MAX_MS = 10_000;

/** The longest time `shard` took no write around `since`: between successive acknowledgements, and from `since` to the first write sent after it acknowledged. */
function unavailability(acks, shard, since) {
  const times = acks.filter((a) => a.shard === shard).map((a) => a.ackedAt).sort((a, b) => a - b);
  let longest = 0;
  for (let k = 1; k < times.length; k++) longest = Math.max(longest, times[k] - times[k - 1]);
  const first = Math.min(...acks.filter((a) => a.shard === shard && a.sentAt >= since).map((a) => a.ackedAt));
  return Math.max(longest, first - since);
}

export async function run({ seed, workDir, log }) {
  const rounds = 8;
  const rand = random(seed);
  const coordinatorRound = Math.floor(rand() * rounds);
  const dataDir = join(workDir, 'cluster');
  const cluster = await startCluster({ dataDir, nodes: 3, coordinators: 2 });
  const acks = [];
  const problems = [];
  let failures = 0;
  let worst = { node: 0, coordinator: 0 };
  const lost = new Map();
  /** Each lost write counted once, however many checks see it. */
  const noteLost = (found, when) => {
    for (const [write, line] of found) {
      if (!lost.has(write) && lost.size < 5) problems.push(`${when}: lost ${line}`);
      lost.set(write, line);
    }
  };
  let unsynced = 0;
  let shared = 0;
  let onDisk;
  try {
    await createReplicatedIndex(cluster, INDEX, SHARDS);
    for (let round = 0; round < rounds; round++) {
      const withCoordinator = round === coordinatorRound;
      const load = startWriteLoad(cluster, INDEX, { shards: SHARDS, seed: seed * 1000 + round, prefix: `r${round}-` });
      let victim;
      let roundAcks;
      try {
        await sleep(1000 + Math.floor(rand() * 2000));
        const allocation = await allocationOf(cluster, INDEX);
        victim = pick(rand, [...new Set(allocation.map((copies) => copies[0]))].sort());
        const affected = withCoordinator ? allocation.map((_, i) => i + 1) : allocation.flatMap((copies, i) => (copies[0] === victim ? [i + 1] : []));
        const leader = withCoordinator ? await cluster.leader() : null;
        const killedAt = Date.now();
        await Promise.all([cluster.nodes.get(victim).kill(), leader === null ? null : cluster.coordinators.get(leader).kill()]);
        log(`round ${round + 1}: kill -9 of ${victim} (primary of shard(s) ${allocation.flatMap((c, i) => (c[0] === victim ? [i + 1] : [])).join(', ')})${leader === null ? '' : ` and of the elected coordinator ${leader}`}`);
        if (leader !== null) await cluster.startCoordinator(leader);
        const wrote = await waitFor(() => affected.every((shard) => load.acks.some((a) => a.shard === shard && a.sentAt >= killedAt)),
          { timeoutMs: UNAVAILABLE_MAX_MS + 20_000, everyMs: 50 });
        if (wrote === null) problems.push(`round ${round + 1}: a shard took no write sent after the kill within ${UNAVAILABLE_MAX_MS + 20_000} ms`);
        await sleep(1000);
        await load.stop();
        const gaps = affected.map((shard) => unavailability(load.acks, shard, killedAt));
        const longest = Math.max(...gaps);
        const kind = withCoordinator ? 'coordinator' : 'node';
        worst = { ...worst, [kind]: Math.max(worst[kind], longest) };
        // When each of the node's shards got its new primary (pino's `time`), and by which coordinator, to read a long gap by.
        const promoted = [...cluster.coordinators].flatMap(([name, c]) => c.logs.filter((l) => l.msg === 'shard primary promoted' && l.lost === victim && l.time >= killedAt)
          .map((l) => `#${l.shard} → ${l.promoted} at ${((l.time - killedAt) / 1000).toFixed(2)} s${leader === null ? '' : ` by ${name}`}`));
        log(`round ${round + 1}: ${load.acks.length} writes acknowledged, ${load.failures} not; shard(s) ${affected.join(', ')} took no write for at most `
          + `${gaps.map((g) => (g / 1000).toFixed(2)).join(', ')} s; promoted ${promoted.join(', ') || 'none logged'}`);
      } finally {
        await load.stop();
        roundAcks = load.acks;
        acks.push(...load.acks);
        failures += load.failures;
      }
      await cluster.startNode(victim);
      const synced = await converged(cluster, INDEX, 30_000);
      if (synced.ms === null) {
        unsynced++;
        problems.push(`round ${round + 1}: copies not in sync (as many documents as their primary) 30 s after the node's restart: ${JSON.stringify(synced.copies)}`);
      }
      noteLost(await lostThroughEach(cluster, INDEX, roundAcks), `round ${round + 1}`);
      log(`round ${round + 1}: ${synced.ms === null ? 'copies NOT in sync 30 s' : `every copy in sync ${(synced.ms / 1000).toFixed(1)} s`} after the node's restart; ${lost.size} lost so far`);
    }
    // A later kill may lose an earlier round's writes.
    noteLost(await lostThroughEach(cluster, INDEX, acks), 'after every round');
    const versions = sharedVersions(acks);
    shared = versions.length;
    problems.push(...versions.slice(0, 5).map((line) => `version acknowledged twice: ${line}`));
    onDisk = await stopAndCompareCopies(cluster, dataDir, INDEX, acks);
    problems.push(...onDisk.examples);
  } finally {
    await cluster.kill();
  }
  for (const line of problems) log(line);
  const differ = Object.values(onDisk.counts).reduce((a, b) => a + b, 0);
  const longest = Math.max(worst.node, worst.coordinator);
  return {
    pass: lost.size === 0 && shared === 0 && differ === 0 && longest <= UNAVAILABLE_MAX_MS && problems.length === 0 && acks.length > 0,
    figure: `${lost.size} lost of ${acks.length} acknowledged writes in ${rounds} round(s) (${failures} not acknowledged); a shard took no write for at most `
      + `${(worst.node / 1000).toFixed(2)} s across a node's kill${worst.coordinator > 0 ? `, ${(worst.coordinator / 1000).toFixed(2)} s across a node's and the elected coordinator's (round ${coordinatorRound + 1})` : ''}; `
      + `${shared} versions acknowledged twice; ${unsynced} round(s) whose copies did not converge; on disk ${differ} of ${onDisk.compared} replica documents differ from their primary's`,
    details: { rounds, coordinatorRound, acknowledged: acks.length, failures, lost: lost.size, shared, unsynced, worst, onDisk: onDisk.counts, problems },
  };
}

