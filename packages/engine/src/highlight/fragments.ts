/**
 * Cutting a text value into highlight fragments: windows of about
 * `fragmentSize` characters around its matches, starting and ending at token
 * boundaries, not overlapping, each scored by the distinct words it marks.
 */

/** A matching token: [start, end) of the value. */
export interface TextMatch {
  readonly start: number;
  readonly end: number;
  /** Lower-cased, as analysed: what makes two matches the same word. */
  readonly token: string;
}

/** [start, end) of the value, holding matches [from, to). */
export interface Fragment {
  readonly start: number;
  readonly end: number;
  readonly from: number;
  readonly to: number;
  /** Distinct words marked. */
  readonly distinct: number;
}

/** The first index of ascending `values` at or above `x` (`values.length` if none). */
function lowerBound(values: readonly number[], x: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const SPACE = /\s/u;

/**
 * Fragments over `matches` (ascending, not overlapping) of `value`, whose
 * tokens span [tokenStarts[i], tokenEnds[i]): each starts at the first match
 * not yet covered, centred on it, then snapped inwards to whole tokens
 * (never cutting the match; the punctuation stuck to the last token, as
 * `fast.`, stays), and takes every following match that fits.
 */
export function buildFragments(
  value: string, matches: readonly TextMatch[], tokenStarts: readonly number[], tokenEnds: readonly number[], fragmentSize: number,
): Fragment[] {
  const length = value.length;
  const out: Fragment[] = [];
  let floor = 0;
  let i = 0;
  while (i < matches.length) {
    const first = matches[i]!;
    const size = Math.max(fragmentSize, first.end - first.start);
    let start = Math.max(floor, first.start - Math.floor((size - (first.end - first.start)) / 2));
    let end = Math.min(length, start + size);
    // Near the end of the value: spend the unused room before the match instead.
    if (end - start < size) start = Math.max(floor, end - size);
    // Whole tokens: start at a token's start, end at a token's end, keeping the match.
    if (start > 0) {
      const startToken = lowerBound(tokenStarts, start);
      start = startToken < tokenStarts.length ? Math.min(tokenStarts[startToken]!, first.start) : first.start;
    }
    if (end < length) {
      const endToken = lowerBound(tokenEnds, end + 1) - 1;
      end = endToken >= 0 ? Math.max(tokenEnds[endToken]!, first.end) : first.end;
      const next = Math.min(length, tokenStarts[lowerBound(tokenStarts, end)] ?? length);
      while (end < next && !SPACE.test(value[end]!)) end++;
    }
    let j = i + 1;
    while (j < matches.length && matches[j]!.end <= end) j++;
    const words = new Set<string>();
    for (let k = i; k < j; k++) words.add(matches[k]!.token);
    out.push({ start, end, from: i, to: j, distinct: words.size });
    floor = end;
    i = j;
  }
  return out;
}
