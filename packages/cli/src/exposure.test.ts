import { anonymousExposure, clusterExposure, isLoopback } from './exposure.js';

it('loopback addresses: 127.0.0.0/8, ::1 in its forms, localhost', () => {
  for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', 'localhost', 'LOCALHOST', 'api.localhost']) {
    expect([host, isLoopback(host)]).toEqual([host, true]);
  }
  for (const host of ['0.0.0.0', '::', '', '10.0.0.5', '128.0.0.1', '::2', 'example.com', 'localhost.example.com', '127.0.0.1.nip.io']) {
    expect([host, isLoopback(host)]).toEqual([host, false]);
  }
});

it('a server off loopback needs a key or --allow-anonymous, and the refusal says how to fix it', () => {
  expect(anonymousExposure({ host: '127.0.0.1', apiKey: '', allowAnonymous: false })).toBeUndefined();
  expect(anonymousExposure({ host: '0.0.0.0', apiKey: 'k'.repeat(16), allowAnonymous: false })).toBeUndefined();
  expect(anonymousExposure({ host: '0.0.0.0', apiKey: '', allowAnonymous: true })).toBeUndefined();
  const refusal = anonymousExposure({ host: '', apiKey: '', allowAnonymous: false });
  expect(refusal).toMatch(/^refusing to serve the HTTP API on every address without an API key/);
  expect(refusal).toMatch(/--api-key KEY \(or TESSERA_API_KEY.*--allow-anonymous/);
  expect(refusal).not.toContain('\n');
});

it('a coordinator\'s RPC listener and a node\'s relay listener off loopback need a cluster secret or --allow-anonymous', () => {
  const open = { clusterSecret: '', allowAnonymous: false };
  expect(clusterExposure('coordinator', { ...open, rpcHost: '127.0.0.1' })).toBeUndefined();
  expect(clusterExposure('coordinator', { ...open, rpcHost: '0.0.0.0', clusterSecret: 's' })).toBeUndefined();
  expect(clusterExposure('coordinator', { ...open, rpcHost: '0.0.0.0', allowAnonymous: true })).toBeUndefined();
  const rpc = clusterExposure('coordinator', { ...open, rpcHost: '0.0.0.0' });
  expect(rpc).toMatch(/^refusing to take nodes on the RPC listener on 0\.0\.0\.0 without a cluster secret: anyone who reaches it could join as a node/);
  expect(rpc).toMatch(/--cluster-secret \(or TESSERA_CLUSTER_SECRET.*--rpc-host 127\.0\.0\.1.*--allow-anonymous/);
  expect(rpc).not.toContain('\n');
  // A node listens only with a relay port.
  expect(clusterExposure('node', { ...open, relayHost: '10.0.0.5', relayPort: 'off' })).toBeUndefined();
  expect(clusterExposure('node', { ...open, relayHost: '127.0.0.1', relayPort: 8895 })).toBeUndefined();
  expect(clusterExposure('node', { ...open, relayHost: '10.0.0.5', relayPort: 8895 })).toMatch(/^refusing to take relayed writes on the relay listener on 10\.0\.0\.5 without a cluster secret.*--relay-host 127\.0\.0\.1/);
  // The embedded server has neither listener.
  expect(clusterExposure('serve', { ...open })).toBeUndefined();
});
