/**
 * The shard nodes a coordinator knows, with the RPC client that reaches each.
 * The embedded server registers its one in-process node; the cluster adds
 * nodes as they join over WebSocket.
 */
import type { RpcClient } from '@tessera/rpc';

export interface NodeEntry {
  name: string;
  client: RpcClient;
  host: string;
  httpPort: number;
  role: string;
  /** Runs in the coordinator's own process. */
  local: boolean;
}

export class NodeDirectory {
  private readonly nodes = new Map<string, NodeEntry>();

  add(entry: NodeEntry): void {
    this.nodes.set(entry.name, entry);
  }

  get(name: string): NodeEntry | undefined {
    return this.nodes.get(name);
  }

  /** Names in a stable order (allocation is deterministic for the same membership). */
  names(): string[] {
    return [...this.nodes.keys()].sort();
  }

  all(): NodeEntry[] {
    return this.names().map((n) => this.nodes.get(n) as NodeEntry);
  }

  isActive(name: string): boolean {
    const node = this.nodes.get(name);
    return node !== undefined && !node.client.closed;
  }
}

/**
 * Shard copies for a new index: primaries round-robin over the nodes, each
 * replica on the next distinct node, so no two copies of a shard share a node.
 * With fewer nodes than copies, the missing replicas stay unassigned.
 */
export function allocateShards(nodeNames: string[], shards: number, replicas: number, offset = 0): string[][] {
  const allocation: string[][] = [];
  const n = nodeNames.length;
  for (let s = 0; s < shards; s++) {
    const copies: string[] = [];
    for (let r = 0; r <= replicas && r < n; r++) copies.push(nodeNames[(offset + s + r) % n] as string);
    allocation.push(copies);
  }
  return allocation;
}
