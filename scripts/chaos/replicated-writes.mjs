// What the replication scenarios (R3–R5) share: an index of a few shards
// with one replica on a cluster from lib.mjs's startCluster, a write load
// through every coordinator recording each acknowledged write, and the
// checks made afterwards — through the coordinators (every acknowledged
// write readable at its version or a later one) and on disk (every copy of
// a shard read with the engine itself, once the cluster is stopped).
import { join } from 'node:path';
import { isNewer, originOf, Shard } from '../../packages/engine/dist/index.js';
import { shardDirectory } from '../../packages/node/dist/index.js';
import { xxh32 } from '../../packages/schema/dist/index.js';
import { keepAliveAgent, pick, random, request, sleep, waitFor } from './lib.mjs';

/** The shard (1…`shards`) a document ID routes to, as the coordinator routes it. */
export const shardOf = (id, shards) => (xxh32(id, 0) % shards) + 1;

/** Create `index` with `shards` shards and one replica; resolves with its allocation once every copy is in sync. */
export async function createReplicatedIndex(cluster, index, shards) {
  const created = await request(cluster.port, 'PUT', index, { _settings: { number_of_shards: shards, number_of_replicas: 1 } });
  if (created.status !== 200) throw new Error(`PUT ${index}: ${created.status} ${created.text}`);
  const synced = await converged(cluster, index);
  if (synced.ms === null) throw new Error(`copies of the new ${index} not in sync: ${JSON.stringify(synced.copies)}`);
  return allocationOf(cluster, index);
}

/** The nodes holding each shard's copies, primary first (index GET through a running coordinator). */
export async function allocationOf(cluster, index) {
  const got = await request(runningCoordinator(cluster).port, 'GET', index);
  if (got.status !== 200) throw new Error(`GET ${index}: ${got.status} ${got.text}`);
  return got.json._settings.shards;
}

function runningCoordinator(cluster) {
  const up = [...cluster.coordinators.values()].find((c) => c.child.exitCode === null && c.child.signalCode === null);
  if (up === undefined) throw new Error('no coordinator running');
  return up;
}

/**
 * Until every copy of `index` is in sync on an active node, each replica with
 * as many documents as its primary, as the elected coordinator's /.nodes
 * shows them: resolves with { ms } once so, or with { ms: null, copies }
 * (what /.nodes last showed) after `timeoutMs`.
 */
export async function converged(cluster, index, timeoutMs = 60_000) {
  const startedAt = Date.now();
  let copies = [];
  const done = await waitFor(async () => {
    const leader = cluster.coordinators.get(await cluster.leader());
    const allocation = await allocationOf(cluster, index);
    const listed = (await request(leader.port, 'GET', '/.nodes', undefined, { timeoutMs: 5000 })).json;
    copies = listed.flatMap((n) => (n.shards ?? []).filter((c) => c.index === index).map((c) => ({ ...c, node: n.name, active: n.active })));
    if (copies.length !== allocation.flat().length || copies.some((c) => !c.in_sync || !c.active)) return false;
    return allocation.every((_, i) => new Set(copies.filter((c) => c.shard === i + 1).map((c) => c.documents)).size === 1);
  }, { timeoutMs, everyMs: 100 });
  return done === null ? { ms: null, copies } : { ms: Date.now() - startedAt };
}

/**
 * Writers PUTting into `index` until stopped, `perShard` per shard, each
 * through its own coordinator in turn (the next running one when its own
 * does not answer, as a client of a real cluster would retry): every
 * `hotEvery`-th write overwrites one of `hot` IDs of its shard, the others
 * write new IDs; every ID starts with `prefix`. Every acknowledged write is
 * kept ({ id, shard, version, token, via, sentAt, ackedAt }); `failures`
 * counts the others.
 */
export function startWriteLoad(cluster, index, { shards, seed, prefix = '', perShard = 2, hot = 5, hotEvery = 4 }) {
  let stopped = false;
  const load = { acks: [], failures: 0, sent: 0 };
  const names = [...cluster.coordinators.keys()];
  const writer = async (w) => {
    const shard = (w % shards) + 1;
    const rand = random(seed * 100 + w);
    const hotIds = [];
    for (let k = 0; hotIds.length < hot; k++) if (shardOf(`${prefix}hot${k}`, shards) === shard) hotIds.push(`${prefix}hot${k}`);
    const agent = keepAliveAgent();
    let via = w % names.length;
    let next = 0;
    try {
      for (let i = 0; !stopped; i++) {
        let id;
        if (i % hotEvery === hotEvery - 1) id = pick(rand, hotIds);
        else do id = `${prefix}w${w}-${next++}`; while (shardOf(id, shards) !== shard);
        const coordinator = cluster.coordinators.get(names[via]);
        const token = `${seed}.${w}.${i}`;
        const sentAt = Date.now();
        load.sent++;
        const reply = await request(coordinator.port, 'PUT', `${index}${id}`, { token }, { agent, timeoutMs: 30_000 }).catch(() => undefined);
        if (reply?.status === 200) {
          load.acks.push({ id, shard, version: reply.json._version, token, via: names[via], sentAt, ackedAt: Date.now() });
        } else {
          load.failures++;
          if (reply === undefined) via = (via + 1) % names.length;
          await sleep(50);
        }
      }
    } finally {
      agent.destroy();
    }
  };
  const running = Promise.all(Array.from({ length: shards * perShard }, (_, w) => writer(w)));
  load.stop = async () => { stopped = true; await running; };
  return load;
}

/** Each ID's latest acknowledged write. */
function latestAcks(acks) {
  const latest = new Map();
  for (const ack of acks) if ((latest.get(ack.id)?.version ?? 0) < ack.version) latest.set(ack.id, ack);
  return latest;
}

/**
 * The acknowledged writes a coordinator on `port` does not show: a document
 * missing, at an older version, or at that version with another write's
 * token; each as { write: 'id@version', line }. Empty when none was lost.
 */
async function lostWrites(port, index, acks) {
  const lost = [];
  for (const [id, ack] of latestAcks(acks)) {
    const got = await request(port, 'GET', `${index}${id}`);
    const doc = got.json;
    if (got.status !== 200 || !(doc?._version > ack.version || (doc._version === ack.version && doc.token === ack.token))) {
      lost.push({ write: `${id}@${ack.version}`, line: `${id}@${ack.version} (${got.status} ${doc?._version ?? '-'} ${doc?.token ?? '-'})` });
    }
  }
  return lost;
}

/** The acknowledged writes some coordinator does not show (`lostWrites` through each): Map 'id@version' → what each showed. */
export async function lostThroughEach(cluster, index, acks) {
  const lost = new Map();
  for (const [name, coordinator] of cluster.coordinators) {
    for (const { write, line } of await lostWrites(coordinator.port, index, acks)) lost.set(write, [...(lost.get(write) ?? []), `through ${name}: ${line}`]);
  }
  return new Map([...lost].map(([write, lines]) => [write, lines.join('; ')]));
}

/** Acknowledged writes of one document sharing a `_version` (must be none: two primaries gave it out). */
export function sharedVersions(acks) {
  const seen = new Map();
  const shared = [];
  for (const ack of acks) {
    const key = `${ack.id}@${ack.version}`;
    if (seen.has(key)) shared.push(`${key}: ${seen.get(key)} and ${ack.token}`);
    seen.set(key, ack.token);
  }
  return shared;
}

/** Every document of one copy on disk, id → { version, token, origin }, read with the engine (its node stopped). */
async function copyOnDisk(dataDir, node, index, shard) {
  const copy = await Shard.open({ path: shardDirectory(join(dataDir, node, 'nodes', node), index, shard) });
  try {
    const docs = new Map();
    for await (const doc of copy.documents()) docs.set(String(doc.id), { version: doc.version, token: doc.body.token, origin: originOf(doc) });
    return docs;
  } finally {
    await copy.close();
  }
}

/** Stop `cluster` cleanly and compare every copy of `index` on disk (`compareCopiesOnDisk`). */
export async function stopAndCompareCopies(cluster, dataDir, index, acks) {
  const allocation = await allocationOf(cluster, index);
  await cluster.stop();
  return compareCopiesOnDisk(dataDir, index, allocation, acks);
}

/**
 * Every copy of every shard read from disk (the cluster stopped cleanly)
 * and compared, ID by ID, with its primary's copy and with the latest
 * acknowledged write: `older` — a replica holds an older version than its
 * primary (by origin: applied an older version over a newer, or missed the
 * newer); `newer`, `missing`, `extra` — any other disagreement with the
 * primary; `lost` — the primary's copy lacks an acknowledged write.
 * Resolves with the counts, the documents compared and up to 10 examples.
 */
async function compareCopiesOnDisk(dataDir, index, allocation, acks) {
  const counts = { older: 0, newer: 0, missing: 0, extra: 0, lost: 0 };
  const examples = [];
  const note = (kind, line) => { counts[kind]++; if (examples.length < 10) examples.push(`${kind}: ${line}`); };
  let compared = 0;
  const latest = latestAcks(acks);
  for (let shard = 1; shard <= allocation.length; shard++) {
    const [primaryNode, ...replicaNodes] = allocation[shard - 1];
    const primary = await copyOnDisk(dataDir, primaryNode, index, shard);
    for (const node of replicaNodes) {
      const replica = await copyOnDisk(dataDir, node, index, shard);
      for (const [id, want] of primary) {
        compared++;
        const got = replica.get(id);
        const where = `shard ${shard} ${id}: primary ${primaryNode} v${want.version} (${want.token}), replica ${node}`;
        if (got === undefined) note('missing', `${where} has none`);
        else if (isNewer(want.origin, got.origin)) note('older', `${where} v${got.version} (${got.token})`);
        else if (isNewer(got.origin, want.origin) || got.token !== want.token) note('newer', `${where} v${got.version} (${got.token})`);
      }
      for (const id of replica.keys()) if (!primary.has(id)) note('extra', `shard ${shard} ${id}: on replica ${node}, not on primary ${primaryNode}`);
    }
    for (const [id, ack] of latest) {
      if (ack.shard !== shard) continue;
      const held = primary.get(id);
      if (held === undefined || !(held.version > ack.version || (held.version === ack.version && held.token === ack.token))) {
        note('lost', `shard ${shard} ${id}: acknowledged v${ack.version} (${ack.token}), primary ${primaryNode} holds ${held === undefined ? 'none' : `v${held.version} (${held.token})`}`);
      }
    }
  }
  return { counts, compared, examples };
}
