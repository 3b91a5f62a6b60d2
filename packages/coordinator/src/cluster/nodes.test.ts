import { allocateShards } from './nodes.js';

describe('allocateShards', () => {
  it('never puts two copies of a shard on one node', () => {
    const allocation = allocateShards(['n1', 'n2', 'n3'], 5, 2);
    expect(allocation).toHaveLength(5);
    for (const copies of allocation) {
      expect(copies).toHaveLength(3);
      expect(new Set(copies).size).toBe(3);
    }
    const primaries = allocation.map((c) => c[0]);
    expect(new Set(primaries).size).toBe(3);
  });

  it('leaves replicas unassigned when there are too few nodes', () => {
    expect(allocateShards(['node1'], 3, 1)).toEqual([['node1'], ['node1'], ['node1']]);
  });
});
