/** An inclusive span of block numbers. */
export interface Span {
  fromBlock: number;
  toBlock: number;
}

/**
 * The union of inclusive block spans, as the fewest disjoint spans in ascending order: spans that overlap
 * or touch become one. Pure.
 *
 * @example mergeSpans([{ fromBlock: 5, toBlock: 9 }, { fromBlock: 0, toBlock: 4 }, { fromBlock: 20, toBlock: 30 }])
 * // → [{ fromBlock: 0, toBlock: 9 }, { fromBlock: 20, toBlock: 30 }]
 */
export function mergeSpans(spans: readonly Span[]): Span[] {
  const sorted = [...spans].sort((a, b) => a.fromBlock - b.fromBlock);
  const merged: Span[] = [];
  for (const s of sorted) {
    const last = merged.at(-1);
    if (last && s.fromBlock <= last.toBlock + 1) last.toBlock = Math.max(last.toBlock, s.toBlock);
    else merged.push({ fromBlock: s.fromBlock, toBlock: s.toBlock });
  }
  return merged;
}
