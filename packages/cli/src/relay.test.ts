import { EventEmitter } from 'node:events';
import type { RpcClient, RpcPeer } from '@tessera/rpc';
import { failingWhileLost } from './relay.js';

/** A dialled peer as the relay sees it: `connected`, and the event when a connection is made. */
class FakePeer extends EventEmitter {
  connected = false;
  remote = { name: 'node2' };
}

function counting(): RpcClient & { calls: number } {
  const client = {
    calls: 0,
    call: () => { client.calls++; return Promise.resolve('applied'); },
    close: () => Promise.resolve(),
    closed: false,
    inFlight: 0,
  };
  return client as unknown as RpcClient & { calls: number };
}

it('relays wait for the first connection, then fail at once while the connection is down, and go through once it is back', async () => {
  const peer = new FakePeer();
  const inner = counting();
  const client = failingWhileLost(peer as unknown as RpcPeer, inner);
  // Before the first connection: the call goes to the peer, which waits for it (connect.ts).
  await expect(client.call('doc.replicate', {} as never)).resolves.toBe('applied');
  peer.connected = true;
  peer.emit('connected');
  await expect(client.call('doc.replicate', {} as never)).resolves.toBe('applied');
  // Lost: refused at once, not sent.
  peer.connected = false;
  await expect(client.call('doc.replicate', {} as never)).rejects.toMatchObject({ code: 'rpc_unavailable', status: 503, message: expect.stringContaining('node2') });
  expect(inner.calls).toBe(2);
  peer.connected = true;
  peer.emit('connected');
  await expect(client.call('doc.replicate', {} as never)).resolves.toBe('applied');
  expect(inner.calls).toBe(3);
});
