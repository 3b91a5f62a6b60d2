// R7 — read-your-writes through the coordinator, one key, many clients.
//
// Method: a coordinator and 3 shard nodes (the index gets the cluster's
// default shards and one replica). Many clients, each on its own
// keep-alive connection to the coordinator, loop on ONE document: write it
// (by turns PUT and UPDATE, the body naming the client and its step), then
// GET it at once. The read must show the acknowledged write or a later one:
// `_version` ≥ the version acknowledged, and at that same version the
// client's own body. A client's reads must also never go back (monotonic).
// Quick: 8 clients × 25 steps; full: 32 clients × 1,000 steps.
import { join } from 'node:path';
import { keepAliveAgent, request, startCluster } from '../lib.mjs';

export const id = 'R7';
export const title = 'read-your-writes through the coordinator, single key, many clients';
export const target = '100 %';

const INDEX = 'ryw';
const KEY = 'hot';

export async function run({ quick, seed, workDir, log }) {
  const clients = quick ? 8 : 32;
  const steps = quick ? 25 : 1000;
  const cluster = await startCluster({ dataDir: join(workDir, 'cluster'), nodes: 3 });
  let reads = 0;
  let stale = 0;
  let backwards = 0;
  const unexpected = [];
  const examples = [];
  try {
    const first = await request(cluster.port, 'PUT', `/${INDEX}/${KEY}`, { client: -1, step: 0 });
    if (first.status !== 200 && first.status !== 201) throw new Error(`first PUT answered ${first.status}: ${first.text}`);
    const progressEvery = Math.max(1, Math.floor(steps / 5));
    await Promise.all(Array.from({ length: clients }, async (_, client) => {
      const agent = keepAliveAgent();
      let lastSeen = 0;
      try {
        for (let step = 0; step < steps && unexpected.length < 10; step++) {
          const method = (client + step + seed) % 2 === 0 ? 'PUT' : 'UPDATE';
          const write = await request(cluster.port, method, `/${INDEX}/${KEY}`, { client, step }, { agent });
          if (write.status !== 200) { unexpected.push(`${method}: ${write.status} ${write.text}`); continue; }
          const acked = write.json._version;
          const read = await request(cluster.port, 'GET', `/${INDEX}/${KEY}`, undefined, { agent });
          if (read.status !== 200) { unexpected.push(`GET: ${read.status} ${read.text}`); continue; }
          reads++;
          const { _version: version, client: who, step: when } = read.json;
          if (version < acked || (version === acked && (who !== client || when !== step))) {
            stale++;
            if (examples.length < 5) examples.push(`client ${client} step ${step}: acknowledged _version ${acked}, read _version ${version} (client ${who}, step ${when})`);
          }
          if (version < lastSeen) backwards++;
          lastSeen = Math.max(lastSeen, version);
          if (client === 0 && step % progressEvery === 0) log(`step ${step}/${steps}: ${reads} reads, ${stale} stale`);
        }
      } finally {
        agent.destroy();
      }
    }));
  } finally {
    await cluster.stop();
  }
  for (const line of [...examples, ...unexpected]) log(line);
  const fresh = reads - stale;
  const pass = reads === clients * steps && stale === 0 && backwards === 0 && unexpected.length === 0;
  return {
    pass,
    figure: `${reads === 0 ? 0 : fresh === reads ? 100 : ((100 * fresh) / reads).toFixed(2)} % of ${reads} reads saw their own write or a later one `
      + `(${stale} stale, ${backwards} went back, ${unexpected.length} errors); ${clients} clients on one key`,
    details: { reads, stale, backwards, unexpected, examples },
  };
}
