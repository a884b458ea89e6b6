export interface BlockSpan {
  fromBlock: number;
  toBlock: number;
}

/**
 * Splits an inclusive block range into at most `count` contiguous spans of near-equal length, newest
 * first, so chunks that run concurrently each start on fresh data.
 *
 * @example splitRange({ fromBlock: 0, toBlock: 9 }, 3) // → [{7, 9}, {3, 6}, {0, 2}] (as objects)
 */
export function splitRange(range: BlockSpan, count: number): BlockSpan[] {
  const blocks = range.toBlock - range.fromBlock + 1;
  if (blocks <= 0) return [];
  const n = Math.max(1, Math.min(count, blocks));
  const spans: BlockSpan[] = [];
  let to = range.toBlock;
  for (let i = 0; i < n; i++) {
    const size = Math.floor(blocks / n) + (i < blocks % n ? 1 : 0);
    spans.push({ fromBlock: to - size + 1, toBlock: to });
    to -= size;
  }
  return spans;
}
