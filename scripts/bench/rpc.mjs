#!/usr/bin/env node
// Benchmark (prints, never asserts): small RPC calls (a doc.get-sized call and
// reply) with 64 in flight, through the in-process transport and through the
// WebSocket transport — both ends in this process, then the serving end in a
// child process (the real shape: coordinator and node apart). Prints calls/s
// and CPU per call on each side.
//   npx tsc -b && node scripts/bench/rpc.mjs [--seconds 2] [--in-flight 64]
import { execSync, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { InProcessClient, RpcServer, connectPeer } from '../../packages/rpc/dist/index.js';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const seconds = option('seconds', 2);
const inFlight = option('in-flight', 64);
const quiet = { debug() {}, info() {}, warn: (b, m) => console.error(m, b), error: (b, m) => console.error(m, b) };
const identity = (name, role) => ({ name, role });

const params = { index: '/bench/', shard: 1, id: 'doc-12345' };
const reply = { id: 'doc-12345', docid: 12345, version: 3, body: { title: 'A small document', count: 42, tags: ['a', 'b'] } };
const handler = async () => reply;

if (args.includes('--serve')) {
  // Child: serve calls until told to stop, then report our CPU time.
  const server = await RpcServer.listen({ identity: identity('bench-coordinator', 'coordinator'), handler, logger: quiet });
  let cpuAtStart;
  process.on('message', async (message) => {
    if (message === 'start') cpuAtStart = process.cpuUsage();
    if (message === 'stop') {
      const cpu = process.cpuUsage(cpuAtStart);
      process.send({ cpuMicros: cpu.user + cpu.system });
      await server.close();
      process.disconnect();
    }
  });
  process.send({ url: server.url });
} else {
  await main();
}

/** Keeps `inFlight` calls running for `seconds`; returns calls done and this process's CPU µs. */
async function drive(client, onStart = () => undefined) {
  for (let i = 0; i < 2000; i++) await client.call('doc.get', params); // warm-up
  onStart();
  let done = 0;
  const cpuAtStart = process.cpuUsage();
  const startedAt = performance.now();
  const endAt = startedAt + seconds * 1000;
  // The clock is read in the loop, not by a timer: in-process calls resolve in
  // microtasks only, so a timer would never get its turn.
  const lane = async () => {
    while (performance.now() < endAt) {
      await client.call('doc.get', params);
      done++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  const elapsedS = (performance.now() - startedAt) / 1000;
  const cpu = process.cpuUsage(cpuAtStart);
  return { done, elapsedS, cpuMicros: cpu.user + cpu.system };
}

function line(name, { done, elapsedS, cpuMicros }, servingCpuMicros) {
  const rate = Math.round(done / elapsedS).toLocaleString('en-US');
  const callerCpu = (cpuMicros / done).toFixed(1);
  const serving = servingCpuMicros === undefined ? '' : `, serving side ${(servingCpuMicros / done).toFixed(1)} µs`;
  console.log(`${name.padEnd(34)} ${rate.padStart(9)} calls/s   CPU per call: ${servingCpuMicros === undefined ? 'both sides' : 'calling side'} ${callerCpu} µs${serving}`);
}

async function main() {
  let commit = 'unknown';
  try { commit = execSync('git rev-parse --short HEAD', { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim(); } catch { /* not a checkout */ }
  console.log(`node ${process.version}, commit ${commit}, ${inFlight} calls in flight, ${seconds} s per run`);

  const inProcess = new InProcessClient(handler);
  line('in-process', await drive(inProcess));
  await inProcess.close();

  const server = await RpcServer.listen({ identity: identity('coordinator', 'coordinator'), handler, logger: quiet });
  const local = connectPeer(server.url, { identity: identity('node1', 'node'), logger: quiet });
  await local.whenConnected();
  line('websocket, one process', await drive(local));
  await local.close();
  await server.close();

  const child = fork(fileURLToPath(import.meta.url), ['--serve'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const nextMessage = () => new Promise((resolve) => child.once('message', resolve));
  const { url } = await nextMessage();
  const remote = connectPeer(url, { identity: identity('node1', 'node'), logger: quiet });
  await remote.whenConnected();
  const result = await drive(remote, () => child.send('start'));
  child.send('stop');
  const { cpuMicros: servingCpuMicros } = await nextMessage();
  line('websocket, serving in a child', result, servingCpuMicros);
  await remote.close();
}
