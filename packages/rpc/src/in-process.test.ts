import { TesseraError } from '@tessera/errors';
import { InProcessClient } from './in-process.js';
import { DEFERRED, type AnyCalls } from './transport.js';
import { describeTransport } from './transport.conformance.js';

describeTransport('in-process', async (handler, options) => new InProcessClient<AnyCalls>(handler, options));

describe('in-process callNow', () => {
  const never = async (): Promise<unknown> => new Promise(() => undefined);

  it('answers with the immediate handler, or defers when it does or there is none', () => {
    const client = new InProcessClient<AnyCalls>(never, {}, (method, params) => (method === 'doc.get' ? { method, params } : DEFERRED));
    expect(client.callNow('doc.get', { id: 'x' })).toEqual({ method: 'doc.get', params: { id: 'x' } });
    expect(client.callNow('doc.write', {})).toBe(DEFERRED);
    expect(new InProcessClient<AnyCalls>(never).callNow('doc.get', {})).toBe(DEFERRED);
  });

  it('fails as call does: a TesseraError intact, anything else a 500 without its text', () => {
    const conflict = new InProcessClient<AnyCalls>(never, {}, () => { throw new TesseraError('version_conflict', 409, 'Version mismatch!'); });
    expect(() => conflict.callNow('x', {})).toThrow(expect.objectContaining({ code: 'version_conflict', status: 409 }));
    const broken = new InProcessClient<AnyCalls>(never, {}, () => { throw new Error('disk /secret failed'); });
    let thrown: unknown;
    try {
      broken.callNow('x', {});
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(TesseraError);
    expect((thrown as TesseraError).status).toBe(500);
    expect((thrown as TesseraError).message).not.toContain('/secret');
  });

  it('defers while every in-flight slot is taken, and after close', async () => {
    const releases: Array<() => void> = [];
    const client = new InProcessClient<AnyCalls>(() => new Promise((res) => releases.push(() => res(null))), { inFlightMax: 1 }, () => 'now');
    const running = client.call('slow', {});
    expect(client.callNow('doc.get', {})).toBe(DEFERRED);
    releases.shift()?.();
    await running;
    expect(client.callNow('doc.get', {})).toBe('now');
    await client.close();
    expect(client.callNow('doc.get', {})).toBe(DEFERRED);
  });
});
