/**
 * The secure default of the servers (API.md §16.3, docs/security.md): an
 * HTTP API reachable from other machines without a master key would let
 * anyone read, write and delete every index, so `serve` and `coordinator`
 * listening on anything but a loopback address refuse to start without
 * `--api-key`, unless `--allow-anonymous` says that is intended. The same
 * holds for the cluster's own listeners and the cluster secret: a
 * coordinator's RPC listener (anyone could join as a node and be given
 * shard copies, documents and all) and a node's relay listener (anyone
 * could write into its replicas).
 */
import { isIP } from 'node:net';

/** 127.0.0.0/8, ::1 (IPv4-mapped forms too) and `localhost`: reachable from this machine only. */
export function isLoopback(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || /^(0{1,4}:){7}0{0,3}1$/.test(h) || /^::ffff:127\./.test(h);
  return false;
}

/**
 * Why the cluster listener of `command` must not start as configured (a
 * coordinator's RPC listener, a node's relay listener, off loopback without a
 * cluster secret), in one line that says how to fix it; undefined when it may.
 */
export function clusterExposure(command: 'serve' | 'coordinator' | 'node', config: {
  clusterSecret?: string; allowAnonymous: boolean; rpcHost?: string; relayHost?: string; relayPort?: number | 'off';
}): string | undefined {
  if (config.clusterSecret !== '' || config.allowAnonymous) return undefined;
  let listener: { what: string; host: string; flag: string; anyone: string } | undefined;
  if (command === 'coordinator' && config.rpcHost !== undefined) {
    listener = { what: 'take nodes on the RPC listener', host: config.rpcHost, flag: '--rpc-host', anyone: 'join as a node and be given shard copies, documents and all' };
  } else if (command === 'node' && config.relayPort !== undefined && config.relayPort !== 'off' && config.relayHost !== undefined) {
    listener = { what: 'take relayed writes on the relay listener', host: config.relayHost, flag: '--relay-host', anyone: 'write into the replicas this node holds' };
  }
  if (listener === undefined || isLoopback(listener.host)) return undefined;
  return `refusing to ${listener.what} on ${listener.host || 'every address'} without a cluster secret: anyone who reaches it could ${listener.anyone}. `
    + 'Give every coordinator and node the same secret with --cluster-secret (or TESSERA_CLUSTER_SECRET; e.g. `openssl rand -hex 32`), '
    + `listen on a loopback address (${listener.flag} 127.0.0.1), or pass --allow-anonymous (TESSERA_ALLOW_ANONYMOUS=true) if no authentication is intended`;
}

/** Why the server must not start as configured, in one line that says how to fix it; undefined when it may. */
export function anonymousExposure(config: { host: string; apiKey: string; allowAnonymous: boolean }): string | undefined {
  if (config.apiKey !== '' || config.allowAnonymous || isLoopback(config.host)) return undefined;
  return `refusing to serve the HTTP API on ${config.host || 'every address'} without an API key: anyone who reaches it could read and change every index. `
    + 'Set a master key with --api-key KEY (or TESSERA_API_KEY, or apiKey in the config file; e.g. `openssl rand -hex 32`), '
    + 'listen on a loopback address (--host 127.0.0.1), or pass --allow-anonymous (TESSERA_ALLOW_ANONYMOUS=true) if no authentication is intended';
}
