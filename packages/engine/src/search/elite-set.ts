/**
 * `_elite_set` (API.md §9.3.2): the OR of the subqueries of highest estimated
 * weight, as Xapian's OP_ELITE_SET picks them by their maximum weight. The
 * estimate comes from the shard's statistics alone (term weights: idf ×
 * (k1 + 1) × `_weight`), never from whether the search scores, so SEARCH and
 * COUNT choose the same set. Each shard chooses with its own statistics, as
 * each Xapian database does.
 */
import { SynonymWeight } from './synonym.js';
import { BoolWeight, PositionalWeight, TermWeight, type Statistics, type Weight } from './weight.js';

/** Subqueries an elite set keeps (Xapian's default set size). */
export const ELITE_SET_SIZE = 10;

/** The largest weight a document can get from `weight`, estimated from the statistics. */
export function estimateMaxWeight(weight: Weight, stats: Statistics): number {
  if (weight instanceof TermWeight) return weight.factor === 0 ? 0 : stats.maxWeight(weight.term, weight.normsKey, weight.factor);
  if (weight instanceof SynonymWeight) return weight.maxWeight;
  if (weight instanceof PositionalWeight) {
    let sum = 0;
    for (const t of weight.terms) sum += estimateMaxWeight(t, stats);
    return sum;
  }
  if (weight instanceof BoolWeight) {
    const children = weight.children;
    switch (weight.op) {
      case 'not':
        return 0;
      case 'and_not':
      case 'filter':
        return estimateMaxWeight(children[0]!, stats);
      case 'max': {
        let max = 0;
        for (const c of children) max = Math.max(max, estimateMaxWeight(c, stats));
        return max;
      }
      default: {
        let sum = 0;
        for (const c of children) sum += estimateMaxWeight(c, stats);
        return sum;
      }
    }
  }
  // Ranges, values, `"*"`, term unions: weight 0.
  return 0;
}

/** The OR of the `size` children of highest estimated weight (ties: the earlier child). */
export function eliteSet(children: readonly Weight[], stats: Statistics, size = ELITE_SET_SIZE): Weight {
  if (children.length === 1) return children[0]!;
  if (children.length <= size) return new BoolWeight('or', children);
  const estimates = children.map((c) => estimateMaxWeight(c, stats));
  const order = children.map((_, i) => i).sort((a, b) => estimates[b]! - estimates[a]! || a - b);
  const kept = order.slice(0, size).sort((a, b) => a - b).map((i) => children[i]!);
  return new BoolWeight('or', kept);
}
