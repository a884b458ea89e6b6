import type { TransferRecord } from '../dataset/types.ts';

export interface PageWindow {
  fromBlock: number;
  toBlock: number;
  /** Continue strictly after this (blockNumber, logIndex), in newest-first order. */
  after?: { blockNumber: number; logIndex: number };
}

/**
 * The rows of one page out of a newest-first list, found by binary search: at most `pageSize` rows
 * inside [fromBlock, toBlock] that come after `after`; `more` tells whether another page would have rows.
 *
 * @example selectPage(list, { fromBlock: 10, toBlock: 20 }, 2) // → { rows: [<20/5>, <20/3>], more: true }
 */
export function selectPage(list: readonly TransferRecord[], window: PageWindow, pageSize: number): { rows: TransferRecord[]; more: boolean } {
  const { after } = window;
  const start = after
    ? firstIndex(list, (t) => t.blockNumber < after.blockNumber || (t.blockNumber === after.blockNumber && t.logIndex < after.logIndex))
    : firstIndex(list, (t) => t.blockNumber <= window.toBlock);
  // first index at or after `start` that is below the range: the end of the window
  const end = firstIndex(list, (t) => t.blockNumber < window.fromBlock, start);
  const stop = Math.min(end, start + pageSize);
  return { rows: list.slice(start, stop), more: stop < end };
}

/** Lowest index i ≥ lo with pred(list[i]) true, for a predicate that is monotone over the list. */
function firstIndex(list: readonly TransferRecord[], pred: (t: TransferRecord) => boolean, lo = 0): number {
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (pred(list[mid]!)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
