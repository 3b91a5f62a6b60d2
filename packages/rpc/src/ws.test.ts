import { connectPeer } from './ws/connect.js';
import type { RpcPeer } from './ws/peer.js';
import { RpcServer } from './ws/server.js';
import { silentLogger } from './ws/test-support.js';
import { describeTransport } from './transport.conformance.js';
import type { AnyCalls } from './transport.js';

// The suite runs twice: each side of a connection must be a full client and a full server.
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

describeTransport('websocket, the dialling side calling', async (handler, options) => {
  const server = await RpcServer.listen({ identity: { name: 'coordinator', role: 'coordinator' }, handler, logger: silentLogger() });
  const client = connectPeer<AnyCalls>(server.url, { identity: { name: 'node1', role: 'node' }, ...options, logger: silentLogger() });
  cleanups.push(() => client.close(), () => server.close());
  await client.whenConnected();
  return client;
});

describeTransport('websocket, the accepting side calling', async (handler, options) => {
  let joined!: (peer: RpcPeer<AnyCalls>) => void;
  const accepted = new Promise<RpcPeer<AnyCalls>>((resolve) => { joined = resolve; });
  const server = await RpcServer.listen<AnyCalls>({
    identity: { name: 'coordinator', role: 'coordinator' }, ...options, logger: silentLogger(), onPeer: (peer) => joined(peer),
  });
  const node = connectPeer(server.url, { identity: { name: 'node1', role: 'node' }, handler, logger: silentLogger() });
  cleanups.push(() => node.close(), () => server.close());
  return accepted;
});
