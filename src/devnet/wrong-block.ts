import { createBloomBitsCache, missingFromBloom } from '../eth/logs-bloom.ts';
import type { ChainStore } from './chain-store.ts';
import type { PageJson } from './corruption.ts';

/**
 * A damaged copy of a getTokenTransfers page (`wrong-block`): one transfer moved into the block of its neighbour
 * in the page (that block's hash, number and time), which the block's logsBloom rules out, while the page stays
 * valid in every other way: newest first, each block's rows agreeing, within the query, the same count, and
 * the page's first and last rows untouched (the page key and the next page's position hold). Undefined when no
 * row of the page can move so (one block only, or every neighbour's bloom may hold it): the order waits.
 *
 * @example moveToOtherBlock(page, '0xa0b8…', chain)
 * // → { page: <copy, tokenTransfers[4] in block 17000001>, block: 17000001, field: 'tokenTransfers[4].blockHash' }
 */
export function moveToOtherBlock(input: PageJson, contract: string, chain: Pick<ChainStore, 'headerByHash'>): { page: PageJson; block: number; field: string } | undefined {
  const rows = input.tokenTransfers;
  const last = rows.length - 1;
  const bits = createBloomBitsCache();
  for (let i = 0; i < last; i++) {
    const newer = rows[i]!;
    const older = rows[i + 1]!;
    // neighbours in different blocks, where either can join the other's block and keep the order (log index descending)
    if (newer.blockNumber === older.blockNumber || (newer.logIndex as number) <= (older.logIndex as number)) continue;
    const moves = [
      { at: i, into: older },
      { at: i + 1, into: newer },
    ];
    for (const { at, into } of moves) {
      if (at === 0 || at === last) continue;
      const row = rows[at]!;
      const logsBloom = chain.headerByHash(into.blockHash as string)?.logsBloom;
      if (!logsBloom) continue;
      const bloom = Buffer.from(logsBloom.slice(2), 'hex');
      if (!missingFromBloom(bloom, { contractAddress: contract, fromAddress: row.fromAddress as string, toAddress: row.toAddress as string }, bits)) continue;
      const moved = { ...row, blockHash: into.blockHash, blockNumber: into.blockNumber, blockTimestamp: into.blockTimestamp };
      return {
        page: { ...input, tokenTransfers: rows.map((r, j) => (j === at ? moved : { ...r })) },
        block: into.blockNumber as number,
        field: `tokenTransfers[${at}].blockHash`,
      };
    }
  }
  return undefined;
}
