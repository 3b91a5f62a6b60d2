// R4 — a replica cut off and healed while its primary keeps writing.
//
// Method: a real etcd, two coordinators and three nodes on loopback, each
// node reaching each coordinator through a loopback TCP relay of its own
// (nodes only ever talk to the coordinators: the relays carry everything a
// replica gets); an index of 4 shards with 1 replica. Each round, under
// writes (two writers per shard through the coordinators, every other write
// an overwrite of one of 20 hot IDs of the shard; the round's IDs are its
// own, so a later round never overwrites what an earlier one left), a
// seeded node's relays are cut (its connections closed, new ones refused)
// for a seeded 1–6 s, then healed: the node redials, and its copies catch
// up from the primary's log (or whole, for those whose primary was promoted
// elsewhere meanwhile) while live writes keep arriving — the two streams
// interleave, which is where a replica could apply an older version over a
// newer one. Writes stop a seeded 0–300 ms after its copies are back in
// sync, so what a catch-up wrote last stays. At the end the cluster is
// stopped cleanly and every copy of every shard is read from disk with the
// engine: each ID must be on every copy at its primary's version by origin
// (term, seq), and the primary must hold every acknowledged write.
// Figure: replica documents older than their primary's (and any other
// difference), acknowledged writes lost; target 0.
// Full only (12 rounds, ~4 min): a round takes ~20 s on 2 cores, the
// cluster's start aside (test/src/replication-faults.test.ts covers a
// node's loss and return in npm test).
import { join } from 'node:path';
import { pick, random, request, sleep, startCluster, waitFor } from '../lib.mjs';
import {
  allocationOf, converged, createReplicatedIndex, lostThroughEach, sharedVersions, startWriteLoad, stopAndCompareCopies,
} from '../replicated-writes.mjs';

export const id = 'R4';
export const title = 'a replica cut off (loopback TCP relays closed) and healed while its primary keeps writing (2 coordinators, etcd, 3 nodes)';
export const target = 'replicas never apply an older version over a newer one';
export const fullOnly = 'a 5-process cluster and etcd, ~20 s a round';

const INDEX = '/r4/';
const SHARDS = 4;
const ROUNDS = 12;

/** Is every copy on `node` of `index` in sync on an active node, as the elected coordinator's /.nodes shows it? */
async function inSyncOn(cluster, node, index) {
  const leader = cluster.coordinators.get(await cluster.leader());
  const listed = (await request(leader.port, 'GET', '/.nodes', undefined, { timeoutMs: 5000 })).json;
  const entry = listed.find((n) => n.name === node);
  const copies = (entry?.shards ?? []).filter((c) => c.index === index);
  return entry?.active === true && copies.length > 0 && copies.every((c) => c.in_sync);
}

export async function run({ seed, workDir, log }) {
  const rand = random(seed);
  const dataDir = join(workDir, 'cluster');
  const names = ['node1', 'node2', 'node3'];
  const cluster = await startCluster({ dataDir, nodes: 3, coordinators: 2, relayed: names });
  const acks = [];
  const problems = [];
  let failures = 0;
  let onDisk;
  try {
    await createReplicatedIndex(cluster, INDEX, SHARDS);
    for (let round = 0; round < ROUNDS; round++) {
      const victim = pick(rand, names);
      const cutMs = 1000 + Math.floor(rand() * 5000);
      const tailMs = Math.floor(rand() * 300);
      const load = startWriteLoad(cluster, INDEX, { shards: SHARDS, seed: seed * 1000 + round, prefix: `r${round}-`, hot: 20, hotEvery: 2 });
      const syncedBefore = new Set([...cluster.coordinators.values()].flatMap((c) => c.logs.filter((l) => l.msg === 'shard copy in sync')));
      try {
        await sleep(1000 + Math.floor(rand() * 1000));
        await cluster.cut(victim);
        await sleep(cutMs);
        await cluster.heal(victim);
        const back = await waitFor(() => inSyncOn(cluster, victim, INDEX), { timeoutMs: 60_000, everyMs: 50 });
        if (back === null) problems.push(`round ${round + 1}: ${victim}'s copies not in sync 60 s after the heal`);
        await sleep(tailMs);
      } finally {
        await load.stop();
        acks.push(...load.acks);
        failures += load.failures;
      }
      const synced = await converged(cluster, INDEX, 30_000);
      if (synced.ms === null) problems.push(`round ${round + 1}: copies not in sync (as many documents as their primary) 30 s after the writes stopped: ${JSON.stringify(synced.copies)}`);
      const caughtUp = [...cluster.coordinators.values()].flatMap((c) => c.logs.filter((l) => l.msg === 'shard copy in sync' && l.node === victim && !syncedBefore.has(l)))
        .map((l) => `#${l.shard} ${l.mode} (${l.mode === 'log' ? `${l.replayed} replayed` : `${l.copied} copied`})`);
      log(`round ${round + 1}: ${victim} cut off ${(cutMs / 1000).toFixed(1)} s; caught up: ${caughtUp.join(', ') || 'none logged'}; `
        + `${load.acks.length} writes acknowledged, ${load.failures} not`);
    }
    problems.push(...[...(await lostThroughEach(cluster, INDEX, acks)).values()].slice(0, 5).map((line) => `lost ${line}`));
    problems.push(...sharedVersions(acks).slice(0, 5).map((line) => `version acknowledged twice: ${line}`));
    onDisk = await stopAndCompareCopies(cluster, dataDir, INDEX, acks);
    problems.push(...onDisk.examples);
  } finally {
    await cluster.kill();
  }
  for (const line of problems) log(line);
  const { older, newer, missing, extra, lost } = onDisk.counts;
  return {
    pass: problems.length === 0 && acks.length > 0,
    figure: `${older} of ${onDisk.compared} replica documents older than their primary's (${newer} newer or differing, ${missing} missing, ${extra} extra), `
      + `${lost} acknowledged writes lost, read from every copy on disk after ${ROUNDS} rounds of a node cut off 1–6 s and healed under writes `
      + `(${acks.length} writes acknowledged, ${failures} not)`,
    details: { counts: onDisk.counts, compared: onDisk.compared, acknowledged: acks.length, failures, problems },
  };
}
