/** What deciding a split needs of a chunk: its blocks, how far it has read, and what it found there. */
export interface SplitCandidate {
  fromBlock: number;
  toBlock: number;
  /** The lowest block committed so far; null before the first page. */
  resumeToBlock: number | null;
  /** Rows committed so far. */
  rows: number;
  done: boolean;
}

/** A split costs at most one request (a partial last page more): it is worth it for this many pages or more. */
export const MIN_SPLIT_PAGES = 4;

/**
 * The rows a chunk still has to read, estimated from what it found so far: its density over the blocks it
 * has read, times the blocks below them. Undefined before its first page, and once done.
 *
 * @example remainingRows({ fromBlock: 0, toBlock: 999, resumeToBlock: 900, rows: 2000, done: false }) // → 18000
 */
export function remainingRows(c: SplitCandidate): number | undefined {
  if (c.done || c.resumeToBlock === null) return undefined;
  const read = c.toBlock - c.resumeToBlock + 1;
  const unread = c.resumeToBlock - c.fromBlock;
  if (read <= 0 || unread <= 0) return undefined;
  return (c.rows * unread) / read;
}

/**
 * Where a running chunk gives its lower blocks away, so that another connection reads them while it goes
 * on with the upper ones: the new chunk takes `fromBlock … m`, the lower half of the blocks it has not
 * reached (below its lowest committed block, which may still hold rows to come). Undefined when the rest
 * is too little to be worth a request more (fewer than `MIN_SPLIT_PAGES` pages, or under two blocks). Pure.
 *
 * @example splitPoint({ fromBlock: 0, toBlock: 999, resumeToBlock: 900, rows: 2000, done: false }, 1000) // → 449: [0, 449] goes
 */
export function splitPoint(c: SplitCandidate, pageSize: number): number | undefined {
  const rest = remainingRows(c);
  if (rest === undefined || rest < MIN_SPLIT_PAGES * pageSize) return undefined;
  const unread = c.resumeToBlock! - c.fromBlock;
  if (unread < 2) return undefined;
  return c.fromBlock + Math.floor(unread / 2) - 1;
}
