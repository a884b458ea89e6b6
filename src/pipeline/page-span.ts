import type { TransferKey } from '../dataset/types.ts';
import type { BlockSpan } from './chunks.ts';

/** Where a chunk's reading stands between two pages: stored with its checkpoint. */
export interface SpanState {
  /**
   * The block the previous page ended in, which this page may go on with (the chunk's open block), or a
   * block the next page reads from its first row: the chunk's `toBlock + 1` before its first page, or its
   * `toBlock` after a refused page key made it re-read that block whole.
   */
  edge: number;
  /** Keys of the rows earlier pages committed in block `edge` (none when it is read from its first row). */
  openKeys: readonly TransferKey[];
}

export interface PageSpanInput<T extends TransferKey & { blockNumber: number }> {
  /** The chunk's blocks. */
  fromBlock: number;
  toBlock: number;
  state: SpanState;
  /** The page's rows, newest first. */
  rows: readonly T[];
  /** The page is the chunk's last one. */
  done: boolean;
}

export interface PageSpan<T> {
  /**
   * Blocks whose rows are now all known: the page's, and in block `state.edge` those of `carried`. A
   * warehouse row of the contract there that neither holds is no longer on the chain. Null when none.
   */
  interior: BlockSpan | null;
  /** Keys committed by earlier pages in the interior (the previous open block's). */
  carried: readonly TransferKey[];
  /** The page's rows in the block it leaves open (its last block, which the next page may go on with). */
  openRows: readonly T[];
  /** The state after this page. */
  next: SpanState;
}

/**
 * What one page of a chunk (read newest first) proves about the blocks it covers. Pages follow one
 * another without gaps, so each block of a chunk is completed by exactly one page: the page its last row
 * is in, with the rows earlier pages held in that block, which the chunk carries from page to page in its
 * checkpoint. Pure.
 *
 * @example pageSpan({ fromBlock: 0, toBlock: 100, state: { edge: 97, openKeys: [k1] }, rows: [r97, r95, r94], done: false })
 * // → { interior: { fromBlock: 95, toBlock: 97 }, carried: [k1], openRows: [r94], next: { edge: 94, openKeys: [key(r94)] } }
 */
export function pageSpan<T extends TransferKey & { blockNumber: number }>(input: PageSpanInput<T>): PageSpan<T> {
  const { fromBlock, toBlock, state, rows, done } = input;
  const high = Math.min(state.edge, toBlock);
  const last = rows.at(-1)?.blockNumber;
  if (!done && last === undefined) return { interior: null, carried: [], openRows: [], next: state };
  const low = done ? fromBlock : last! + 1;
  const interior = low <= high ? { fromBlock: low, toBlock: high } : null;
  const closesEdge = interior !== null && state.edge <= interior.toBlock;
  const openRows = done ? [] : rows.filter((r) => r.blockNumber === last);
  const stillOpen = !done && last === state.edge ? state.openKeys : [];
  return {
    interior,
    carried: closesEdge ? state.openKeys : [],
    openRows,
    next: done
      ? { edge: fromBlock, openKeys: [] }
      : { edge: last!, openKeys: [...stillOpen, ...openRows.map((r) => ({ transactionHash: r.transactionHash, logIndex: r.logIndex }))] },
  };
}
