/**
 * `tessera node`: a shard-node process with no HTTP. It hosts shard copies
 * (one engine each) under `<data>/nodes/<name>/`, the same layout as the
 * embedded server's node, joins the coordinator by dialling its RPC address,
 * and serves the coordinator's calls over that one connection. After a loss
 * it redials with backoff until the coordinator is back. On SIGTERM it stops
 * taking calls, lets those running finish (up to shutdownGraceMs), leaves,
 * and closes its shards (flushing what is pending).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { NODE_REFUSED_METHOD, SHARD_NODE_HELLO_ROLE, type NodeAnnouncement } from '@tessera/coordinator';
import { TesseraError } from '@tessera/errors';
import { PrimaryLease, PRIMARY_LEASE_DEFAULTS, ShardNode } from '@tessera/node';
import { connectPeer, type RpcHandler, type RpcPeer } from '@tessera/rpc';
import type { Logger } from 'pino';
import { lockDataDirectory } from './data-lock.js';
import { shardNodeOptions, type ShardHostOptions } from './shard-host.js';
import { TESSERA_VERSION } from './version.js';

export interface NodeProcessOptions extends ShardHostOptions {
  /** The coordinator's RPC address, `ws://host:port`. */
  join: string;
  /** Shard copies are allocated to this name: keep it (and the data directory) across restarts. */
  name: string;
  dataDir: string;
  /** Time the calls running at SIGTERM get to finish. */
  shutdownGraceMs: number;
  /** Writes as primary are refused this long after the coordinator was last heard (@tessera/node primary-lease.ts). */
  primaryLeaseMs: number;
}

export const NODE_DEFAULTS = {
  join: 'ws://127.0.0.1:8890',
  primaryLeaseMs: PRIMARY_LEASE_DEFAULTS.leaseMs,
} as const;

/** A refused node (say, its name taken by another active node) asks again after this. */
const REFUSED_RETRY_MS = 5000;
/** While draining at shutdown, how often the calls still running are counted. */
const DRAIN_POLL_MS = 20;

export interface RunningNode {
  close(): Promise<void>;
}

export async function runNode(options: NodeProcessOptions, log: Logger): Promise<RunningNode> {
  const dataDir = resolve(options.dataDir);
  const nodeDir = join(dataDir, 'nodes', options.name);
  await mkdir(nodeDir, { recursive: true });
  // Before node.json or a shard copy is touched: one process per node directory.
  const nodeLock = await lockDataDirectory(nodeDir);
  const instance = await nodeInstance(nodeDir, options.name);
  let peer: RpcPeer;
  const lease = new PrimaryLease({
    leaseMs: options.primaryLeaseMs,
    // Read once `peer` is dialled: the sampler starts after, and writes arrive through it.
    lastHeardAt: () => peer.lastHeardAt,
    onExpired: (silentMs) => log.warn({ silentMs, leaseMs: options.primaryLeaseMs }, 'primary lease expired: no writes as primary until the coordinator is heard again'),
    onRenewed: () => log.info('coordinator heard again: primary lease renewed'),
  });
  const node = new ShardNode({ ...shardNodeOptions(options, options.name, nodeDir, log), primaryWriteGate: (where) => lease.check(where) });
  node.warm();
  const announcement: NodeAnnouncement = { dataDir, pid: process.pid, instance, host: hostname(), version: TESSERA_VERSION };
  const rpcLog = log.child({ component: 'rpc' });
  let draining = false;
  let retry: NodeJS.Timeout | undefined;

  const refused = (params: unknown): void => {
    const reason = (params as { reason?: unknown } | null)?.reason;
    log.error({ reason: typeof reason === 'string' ? reason : 'no reason given', retryMs: REFUSED_RETRY_MS }, 'the coordinator refused this node');
    const refusedPeer = peer;
    // After this call's answer is written: leave, and ask again later rather than redial at once.
    setImmediate(() => {
      void refusedPeer.close().then(() => {
        if (draining || peer !== refusedPeer) return;
        retry = setTimeout(() => {
          retry = undefined;
          peer = dial();
        }, REFUSED_RETRY_MS);
      });
    });
  };
  const handler: RpcHandler = async (method, params) => {
    if (method === NODE_REFUSED_METHOD) {
      refused(params);
      return null;
    }
    if (draining) throw new TesseraError('node_closing', 503, 'Shard node is shutting down');
    return node.handle(method, params);
  };
  const dial = (): RpcPeer => {
    const dialled = connectPeer(options.join, {
      identity: { name: options.name, role: SHARD_NODE_HELLO_ROLE, info: { ...announcement } },
      handler,
      logger: rpcLog,
    });
    // Connected is not yet admitted: a refusal (node.refused) may follow at once.
    dialled.on('connected', (hello) => log.info({ coordinator: hello.name, url: options.join }, 'connected to the coordinator'));
    dialled.on('lost', (err) => {
      if (!draining) log.warn({ reason: err.message, url: options.join }, 'lost the coordinator; redialing');
    });
    return dialled;
  };
  peer = dial();
  lease.start();
  log.info({ url: options.join, name: options.name, dataDir, instance }, 'joining');

  return {
    async close() {
      draining = true;
      clearTimeout(retry);
      lease.stop();
      const deadline = Date.now() + options.shutdownGraceMs;
      while (peer.serving > 0 && Date.now() < deadline) await sleep(DRAIN_POLL_MS);
      await peer.close();
      await node.close();
      await nodeLock.release();
    },
  };
}

/**
 * The identity of a node's data directory (see NodeEntry.instance), made on
 * first start and kept in `node.json`: the coordinator tells this node
 * restarting from another process taking its name.
 */
async function nodeInstance(nodeDir: string, name: string): Promise<string> {
  const file = join(nodeDir, 'node.json');
  let text: string | undefined;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (text !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const instance = (parsed as { instance?: unknown } | undefined)?.instance;
    if (typeof instance !== 'string' || instance.length === 0) throw new Error(`${file} is damaged (no instance): remove it, and the node makes a new one when it starts`);
    return instance;
  }
  const instance = randomUUID();
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify({ name, instance, createdAt: new Date().toISOString() }, null, 1)}\n`);
  await rename(tmp, file);
  return instance;
}
