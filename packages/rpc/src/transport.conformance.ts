/**
 * The suite every RPC transport passes (in-process now, WebSocket later):
 * results, error code/status intact, deadlines, bounded in-flight calls.
 * `connect` builds a client whose server side runs `handler`.
 */
import { TesseraError } from '@tessera/errors';
import type { AnyCalls, RpcClient, RpcClientOptions, RpcHandler } from './transport.js';

/** The suite calls made-up methods: its clients name no protocol. */
export type Connect = (handler: RpcHandler, options?: Partial<RpcClientOptions>) => Promise<RpcClient<AnyCalls>>;

export function describeTransport(name: string, connect: Connect): void {
  describe(`${name} transport`, () => {
    const echo: RpcHandler = async (method, params) => ({ method, params });

    it('returns the result of a call', async () => {
      const client = await connect(echo);
      expect(await client.call('doc.get', { index: '/a/', shard: 1, id: 'x' }))
        .toEqual({ method: 'doc.get', params: { index: '/a/', shard: 1, id: 'x' } });
      await client.close();
    });

    it('keeps a TesseraError code and status intact', async () => {
      const client = await connect(async () => { throw new TesseraError('version_conflict', 409, 'Version mismatch!'); });
      await expect(client.call('doc.write', {})).rejects.toMatchObject({ code: 'version_conflict', status: 409, message: 'Version mismatch!' });
      await client.close();
    });

    it('turns an unexpected error into a 500 without leaking it', async () => {
      const client = await connect(async () => { throw new Error('disk /secret failed'); });
      const err = await client.call('x', {}).catch((e: unknown) => e) as TesseraError;
      expect(err).toBeInstanceOf(TesseraError);
      expect(err.status).toBe(500);
      expect(err.message).not.toContain('/secret');
      await client.close();
    });

    it('fails a call past its deadline with 504', async () => {
      const client = await connect(() => new Promise(() => undefined));
      await expect(client.call('slow', {}, { timeoutMs: 30 })).rejects.toMatchObject({ code: 'rpc_timeout', status: 504 });
      await client.close();
    });

    it('bounds calls in flight and queued', async () => {
      const releases: Array<() => void> = [];
      let running = 0;
      let peak = 0;
      const client = await connect(() => new Promise((res) => {
        running++;
        peak = Math.max(peak, running);
        releases.push(() => { running--; res(null); });
      }), { inFlightMax: 2, queuedMax: 1 });
      const calls = [client.call('a', {}), client.call('b', {}), client.call('c', {})];
      let settled = 0;
      for (const call of calls) void call.then(() => { settled++; });
      await expect(client.call('d', {})).rejects.toMatchObject({ code: 'rpc_overloaded', status: 503 });
      // A networked transport needs a few event-loop turns to deliver a call: wait for the event, not one turn.
      while (running < 2) await new Promise((r) => setImmediate(r));
      expect(peak).toBe(2);
      while (settled < calls.length) {
        releases.shift()?.();
        await new Promise((r) => setImmediate(r));
      }
      await Promise.all(calls);
      expect(peak).toBe(2);
      await client.close();
    });

    it('refuses calls after close', async () => {
      const client = await connect(echo);
      await client.close();
      expect(client.closed).toBe(true);
      await expect(client.call('a', {})).rejects.toMatchObject({ code: 'rpc_closed' });
    });
  });
}
