import type { BlockSpan } from './chunks.ts';

export interface PageSpanInput {
  /** The chunk's lowest block. */
  fromBlock: number;
  /**
   * The block the previous page of the chunk ended in (it may go on in this page), or the chunk's
   * `toBlock + 1` before its first page.
   */
  edge: number;
  /** Block numbers of the page's rows, newest first. */
  blocks: readonly number[];
  /** The page is the chunk's last one. */
  done: boolean;
}

export interface PageSpan {
  /**
   * Blocks this page covers alone, every row of them: a warehouse row there that the page lacks is no
   * longer on the chain. Null when there are none.
   */
  interior: BlockSpan | null;
  /** Blocks this page shares with the previous or the next page: their keys are kept until reconciliation. */
  edges: number[];
  /** The `edge` of the next page. */
  nextEdge: number;
}

/**
 * What one page of a chunk (read newest first) proves about the blocks it covers. Pages follow one
 * another without gaps, so each block of a chunk is either inside exactly one page or on the edge between
 * two pages; edges are settled when the range is reconciled. Pure.
 *
 * @example pageSpan({ fromBlock: 0, edge: 101, blocks: [100, 97, 95], done: false })
 * // → { interior: { fromBlock: 96, toBlock: 100 }, edges: [95], nextEdge: 95 }
 */
export function pageSpan({ fromBlock, edge, blocks, done }: PageSpanInput): PageSpan {
  const last = blocks.at(-1);
  const low = done ? fromBlock : last === undefined ? edge : last + 1;
  const high = edge - 1;
  const edges: number[] = [];
  if (blocks[0] === edge) edges.push(edge);
  if (!done && last !== undefined && last !== edge) edges.push(last);
  return {
    interior: low <= high ? { fromBlock: low, toBlock: high } : null,
    edges,
    nextEdge: done || last === undefined ? edge : last,
  };
}
