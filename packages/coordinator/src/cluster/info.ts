/** Cluster information: `GET /` (API.md §12.1) and `GET /.nodes` (§12.2). */
import { cpus } from 'node:os';
import type { NodeInfoReply } from '@tessera/rpc';
import type { IndexRegistry } from '../indexes/registry.js';
import type { NodeDirectory } from './nodes.js';

export interface ClusterIdentity {
  name: string;
  clusterName: string;
  version: string;
  /** Versions of the libraries that matter to operators. */
  libraries: Record<string, string>;
}

export class ClusterInfo {
  constructor(
    private readonly identity: ClusterIdentity,
    private readonly nodes: NodeDirectory,
    private readonly registry: IndexRegistry,
    private readonly defaults: { number_of_shards: number; number_of_replicas: number },
  ) {}

  async root(): Promise<Record<string, unknown>> {
    const nodes = await this.nodeList();
    return {
      name: this.identity.name,
      cluster_name: this.identity.clusterName,
      server: `Tessera v${this.identity.version}`,
      versions: { Tessera: this.identity.version, 'Node.js': process.version, ...this.identity.libraries },
      options: {
        processors: cpus().length,
        thread_pools: { num_shards: this.defaults.number_of_shards, num_replicas: this.defaults.number_of_replicas },
      },
      nodes,
      state: nodes.every((n) => n.active) ? 'READY' : 'WAITING',
    };
  }

  async nodeList(): Promise<Array<Record<string, unknown>>> {
    const allocation = this.registry.list();
    return Promise.all(this.nodes.all().map(async (node) => {
      if (node.client.closed) return { name: node.name, active: false };
      const info = await node.client.call<NodeInfoReply>('node.info', {}).catch(() => undefined);
      if (!info) return { name: node.name, active: false };
      const seqs = new Map(info.shards.map((s) => [`${s.shard}${s.index}`, s.seq]));
      const shards: Array<Record<string, unknown>> = [];
      for (const meta of allocation) {
        meta.allocation.forEach((copies, i) => {
          const position = copies.indexOf(node.name);
          if (position < 0) return;
          shards.push({
            index: meta.path,
            shard: i + 1,
            primary: position === 0,
            seq: seqs.get(`${i + 1}${meta.path}`) ?? 0,
            in_sync: true,
          });
        });
      }
      return {
        name: node.name,
        active: true,
        leader: node.local,
        local: node.local,
        host: node.host,
        http_port: node.httpPort,
        role: node.role,
        shards,
      };
    }));
  }
}
