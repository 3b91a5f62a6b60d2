/**
 * A shard node's relay connections (docs/cluster.md "Writes through every
 * coordinator"): the listener other nodes dial to bring this node, as a
 * replica, the writes they relay as primaries (`doc.replicate` only), and
 * this node's own connections to the replicas it relays to as a primary,
 * dialled on first use and redialled after a loss. Both ends present the
 * cluster secret, as a node does to its coordinators. With a certificate the
 * listener serves wss://, and a node dials another's wss:// listener trusting
 * the node's CA (`--tls-ca`), as it trusts its coordinators'.
 */
import type { SecureContextOptions } from 'node:tls';
import type { RelayPeers } from '@tessera/node';
import { connectPeer, rpcErrors, RpcServer, withSchemaReferences, type RelayTarget, type RpcClient, type RpcHandler, type RpcLogger, type RpcPeer } from '@tessera/rpc';

/** The hello role of a node dialling another one's relay listener. */
export const RELAY_HELLO_ROLE = 'relay';

export interface RelayOptions {
  name: string;
  host: string;
  port: number;
  clusterSecret: string;
  /** The listener's certificate and key: it serves wss://. Undefined: ws://. */
  tls?: SecureContextOptions;
  /** Certificates another node's wss:// listener is verified against; undefined: the system's CAs. */
  ca?: Buffer;
  /** Serves the calls relayed to this node (its ShardNode's handler). */
  handler: RpcHandler;
  logger: RpcLogger;
}

export interface Relay extends RelayPeers {
  /** The address other nodes dial (`ws://host:port`, `wss://` with a certificate), announced to the coordinators. */
  readonly url: string;
  /** New connections get this certificate and key (SIGHUP: a renewed certificate); only for a listener started with `tls`. */
  replaceTls(tls: SecureContextOptions): void;
  close(): Promise<void>;
}

export async function startRelay(options: RelayOptions): Promise<Relay> {
  const secret = options.clusterSecret === '' ? {} : { clusterSecret: options.clusterSecret };
  // Only relays: a node that dials here is a primary bringing changes, nothing else.
  const handler: RpcHandler = (method, params) => {
    if (method !== 'doc.replicate') return Promise.reject(new Error(`a relay connection carries doc.replicate only, not ${method}`));
    return options.handler(method, params);
  };
  const server = await RpcServer.listen({
    host: options.host, port: options.port, identity: { name: options.name, role: RELAY_HELLO_ROLE }, handler, logger: options.logger, ...secret,
    ...(options.tls === undefined ? {} : { tls: options.tls }),
    onPeer: (peer, hello) => {
      if (hello.role !== RELAY_HELLO_ROLE) void peer.close();
    },
  });
  const dialled = new Map<string, { peer: RpcPeer; client: RpcClient }>();
  return {
    url: `${options.tls === undefined ? 'ws' : 'wss'}://${options.host.includes(':') ? `[${options.host}]` : options.host}:${server.port}`,
    client(target: RelayTarget): RpcClient {
      let link = dialled.get(target.url);
      if (link === undefined) {
        const peer = connectPeer(target.url, {
          identity: { name: options.name, role: RELAY_HELLO_ROLE }, logger: options.logger, ...secret, ...(options.ca === undefined ? {} : { ca: options.ca }),
        });
        // A relay names the index schema once the replica holds it, as a coordinator's calls do.
        link = { peer, client: failingWhileLost(peer, withSchemaReferences(peer)) };
        dialled.set(target.url, link);
      }
      return link.client;
    },
    replaceTls: (tls) => server.replaceTls(tls),
    async close() {
      await Promise.all([...dialled.values()].map((link) => link.peer.close()));
      await server.close();
    },
  };
}

/**
 * `client`, except that once `peer` has been connected, a call made while
 * its connection is down fails at once (503 `rpc_unavailable`) instead of
 * waiting for a redial up to the relay's deadline: the replica is lost or
 * cut off, and the write it holds up should have it leave the in-sync set
 * (and recover) now, not after 10 s. A dialled peer's calls otherwise wait
 * for the next connection (connect.ts); those before the first one still do.
 */
export function failingWhileLost(peer: RpcPeer, client: RpcClient): RpcClient {
  let connectedOnce = false;
  peer.on('connected', () => { connectedOnce = true; });
  return {
    call(method, params, callOptions) {
      if (connectedOnce && !peer.connected) return Promise.reject(rpcErrors.unavailable(`the relay connection to ${peer.remote?.name ?? 'the replica'} is down`));
      return client.call(method, params, callOptions);
    },
    close: () => client.close(),
    get closed() { return client.closed; },
    get inFlight() { return client.inFlight; },
  };
}
