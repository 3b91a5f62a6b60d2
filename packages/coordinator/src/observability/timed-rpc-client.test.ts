import { InProcessClient, withSchemaReferences, type RpcClient } from '@tessera/rpc';
import { TimedRpcClient } from './timed-rpc-client.js';

describe('TimedRpcClient', () => {
  it('says what its transport says of passing by reference: a search or GET asks for bodies as JSON alone only across a wire', async () => {
    const inProcess = new InProcessClient(async () => null);
    const acrossAWire = { call: async () => null, close: async () => undefined, closed: false, inFlight: 0 } as unknown as RpcClient;
    try {
      // As IndexRegistry.client wraps them: schema references (by-value transports only), then timing.
      expect(new TimedRpcClient(withSchemaReferences(inProcess), () => null).passesByReference).toBe(true);
      expect(new TimedRpcClient(withSchemaReferences(acrossAWire), () => null).passesByReference).toBe(false);
    } finally {
      await inProcess.close();
    }
  });
});
