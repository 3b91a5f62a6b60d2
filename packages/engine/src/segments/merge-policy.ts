/**
 * Which segments to merge: a tiered policy (Lucene's TieredMergePolicy,
 * simplified). Segments are grouped by size tier (live bytes; a tier is
 * `tierFactor` times the one below, the lowest tier holding everything up
 * to `floorBytes`). When a tier holds `segmentsPerTier` segments, its smallest
 * `mergeFactor` are merged, so each doc is rewritten about
 * log_tierFactor(shard / floor) times. Independently, a segment whose deleted
 * fraction passes `deletesPctMax` is rewritten alone (expunge deletions), and
 * no merge produces more than `maxMergedBytes`.
 */
import assert from 'node:assert/strict';

export interface MergeCandidate {
  readonly id: number;
  readonly byteLength: number;
  readonly docCount: number;
  readonly deletedDocs: number;
}

export interface TieredMergePolicyOptions {
  /** Segments of one tier that trigger a merge. Default 8. */
  segmentsPerTier?: number;
  /** Segments merged at once. Default 8 (= segmentsPerTier: a full tier becomes one segment). */
  mergeFactor?: number;
  /** Size ratio between tiers. Default 8. */
  tierFactor?: number;
  /** Segments up to this size are all in the lowest tier, bytes. Default 2 MiB. */
  floorBytes?: number;
  /** Largest merge result, bytes (estimated as the inputs' live bytes). Default 512 MiB. */
  maxMergedBytes?: number;
  /** Deleted fraction (percent) beyond which a segment is rewritten alone. Default 25. */
  deletesPctMax?: number;
}

export const TIERED_MERGE_DEFAULTS = {
  segmentsPerTier: 8,
  mergeFactor: 8,
  tierFactor: 8,
  floorBytes: 2 * 1024 * 1024,
  maxMergedBytes: 512 * 1024 * 1024,
  deletesPctMax: 25,
} as const;

export class TieredMergePolicy {
  readonly settings: Required<TieredMergePolicyOptions>;

  constructor(options: TieredMergePolicyOptions = {}) {
    this.settings = { ...TIERED_MERGE_DEFAULTS, ...options };
    const s = this.settings;
    assert.ok(s.segmentsPerTier >= 2 && s.mergeFactor >= 2 && s.mergeFactor <= s.segmentsPerTier, 'mergeFactor must be in [2, segmentsPerTier]');
    assert.ok(s.tierFactor > 1 && s.floorBytes > 0 && s.maxMergedBytes >= s.floorBytes, 'tier sizes out of range');
    assert.ok(s.deletesPctMax > 0 && s.deletesPctMax <= 100, 'deletesPctMax must be in (0, 100]');
  }

  /** Live bytes: the segment's size scaled by its live fraction. */
  static liveBytes(c: MergeCandidate): number {
    return c.docCount === 0 ? 0 : (c.byteLength * (c.docCount - c.deletedDocs)) / c.docCount;
  }

  /**
   * Merges to run now: disjoint groups of segment ids (a group of one
   * expunges deletions). `busy` ids are being merged already and are skipped.
   */
  select(segments: readonly MergeCandidate[], busy: ReadonlySet<number> = new Set()): number[][] {
    const s = this.settings;
    const free = segments.filter((c) => !busy.has(c.id));
    const merges: number[][] = [];
    const taken = new Set<number>();
    // Fully deleted segments are dropped by a merge of one (it writes an empty segment or nothing).
    const tiers = new Map<number, MergeCandidate[]>();
    for (const c of free) {
      const live = TieredMergePolicy.liveBytes(c);
      const tier = live <= s.floorBytes ? 0 : Math.ceil(Math.log(live / s.floorBytes) / Math.log(s.tierFactor));
      const list = tiers.get(tier) ?? [];
      list.push(c);
      tiers.set(tier, list);
    }
    for (const [, list] of [...tiers].sort((a, b) => a[0] - b[0])) {
      if (list.length < s.segmentsPerTier) continue;
      list.sort((a, b) => TieredMergePolicy.liveBytes(a) - TieredMergePolicy.liveBytes(b));
      const group: number[] = [];
      let bytes = 0;
      for (const c of list) {
        if (group.length === s.mergeFactor) break;
        const live = TieredMergePolicy.liveBytes(c);
        if (group.length >= 2 && bytes + live > s.maxMergedBytes) break;
        group.push(c.id);
        bytes += live;
      }
      if (group.length >= 2) {
        merges.push(group);
        for (const id of group) taken.add(id);
      }
    }
    for (const c of free) {
      if (taken.has(c.id) || c.docCount === 0) continue;
      if ((c.deletedDocs * 100) / c.docCount > s.deletesPctMax) merges.push([c.id]);
    }
    return merges;
  }
}
