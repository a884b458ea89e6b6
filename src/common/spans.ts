export interface Span {
  fromBlock: number;
  toBlock: number;
}

/**
 * Merges inclusive block spans that overlap or touch.
 *
 * @example mergeSpans([{ fromBlock: 5, toBlock: 9 }, { fromBlock: 0, toBlock: 4 }, { fromBlock: 20, toBlock: 30 }])
 * // → [{ fromBlock: 0, toBlock: 9 }, { fromBlock: 20, toBlock: 30 }]
 */
export function mergeSpans(spans: readonly Span[]): Span[] {
  const sorted = [...spans].sort((a, b) => a.fromBlock - b.fromBlock);
  const out: Span[] = [];
  for (const s of sorted) {
    const last = out.at(-1);
    if (last && s.fromBlock <= last.toBlock + 1) last.toBlock = Math.max(last.toBlock, s.toBlock);
    else out.push({ ...s });
  }
  return out;
}

/** The holes between merged spans. @example gaps([{0, 9}, {20, 30}]) // → [{ fromBlock: 10, toBlock: 19 }] */
export function gaps(merged: readonly Span[]): Span[] {
  const out: Span[] = [];
  for (let i = 1; i < merged.length; i++) out.push({ fromBlock: merged[i - 1]!.toBlock + 1, toBlock: merged[i]!.fromBlock - 1 });
  return out;
}
