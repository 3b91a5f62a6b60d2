import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { TesseraError } from '@tessera/errors';
import { PortClient, servePort } from './port.js';
import { describeTransport } from './transport.conformance.js';
import type { AnyCalls, RpcHandler } from './transport.js';

const ports: MessagePort[] = [];
afterEach(() => {
  for (const port of ports.splice(0)) port.close();
});

/** A client whose calls `handler` answers on the other end of a MessageChannel (in a worker, that end is `parentPort`). */
function connect(handler: RpcHandler, options = {}, close?: () => Promise<void>): PortClient<AnyCalls> {
  const { port1, port2 } = new MessageChannel();
  ports.push(port1, port2);
  servePort(port2, handler, close === undefined ? {} : { close });
  return new PortClient<AnyCalls>(port1, options);
}

describeTransport('message port', async (handler, options) => connect(handler, options));

describe('message port', () => {
  it('carries bytes, Maps and undefined as they are, and hands back a pooled buffer it copied', async () => {
    const frame = Buffer.alloc(64, 7);
    const view = frame.subarray(8, 12);
    let released = 0;
    Object.defineProperty(view, Symbol.for('tessera.release'), { value: () => { released++; } });
    const client = connect(async (method, params) => (method === 'bytes' ? view : params));
    const bytes = await client.call('bytes', {}) as Uint8Array;
    expect([...bytes]).toEqual([7, 7, 7, 7]);
    expect(bytes.buffer.byteLength).toBe(4);
    expect(released).toBe(1);
    const params = { content: { bytes: new Uint8Array([1, 2, 3]) }, map: new Map([['a', 1]]), absent: undefined };
    expect(await client.call('echo', params)).toEqual(params);
    await client.close();
  });

  it('sends the calls of one turn together; one that cannot be cloned fails alone, with 500 rpc_unencodable', async () => {
    const client = connect(async (method, params) => params);
    const [good, bad, reply] = await Promise.allSettled([
      client.call('echo', { n: 1 }), client.call('echo', { f: () => 1 }), client.call('echo', { n: 3 }),
    ]);
    expect(good).toEqual({ status: 'fulfilled', value: { n: 1 } });
    expect(bad).toMatchObject({ status: 'rejected', reason: { code: 'rpc_unencodable', status: 500 } });
    expect(reply).toEqual({ status: 'fulfilled', value: { n: 3 } });
    const server = connect(async () => ({ f: () => 1 }));
    await expect(server.call('x', {})).rejects.toMatchObject({ code: 'rpc_unencodable', status: 500 });
    await client.close();
    await server.close();
  });

  it('fails the calls waiting, and every later one, with 503 once the serving side is gone', async () => {
    const client = connect(() => new Promise(() => undefined));
    const waiting = client.call('slow', {});
    client.fail('worker exited');
    await expect(waiting).rejects.toMatchObject({ code: 'rpc_unavailable', status: 503 });
    await expect(client.call('next', {})).rejects.toMatchObject({ code: 'rpc_unavailable', status: 503 });
    await client.close();
  });

  it('has the serving side close before close() resolves, and reports its unexpected errors', async () => {
    let closedThere = false;
    const unexpected: string[] = [];
    const { port1, port2 } = new MessageChannel();
    ports.push(port1, port2);
    servePort(port2, async () => { throw new Error('boom'); }, {
      close: async () => { closedThere = true; },
      onUnexpected: (err, method) => unexpected.push(`${method}: ${(err as Error).message}`),
    });
    const client = new PortClient<AnyCalls>(port1);
    await expect(client.call('x', {})).rejects.toBeInstanceOf(TesseraError);
    expect(unexpected).toEqual(['x: boom']);
    await client.close();
    expect(closedThere).toBe(true);
    expect(client.closed).toBe(true);
  });
});
