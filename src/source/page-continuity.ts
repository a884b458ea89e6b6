import { TRANSFER_KEYS, type TransferRecord } from '../dataset/types.ts';
import { show } from '../dataset/validate.ts';
import { BadResponseError, describeContext } from './errors.ts';
import { sameTransfer, type TransfersPage, type TransfersPageQuery } from './transfers-page.ts';

/**
 * Checks a page against the last row of the page before it (the one whose `nextPageKey` fetched it). Only
 * what no reorg can explain fails: a block's content is fixed by its hash, so the same transfer served again
 * under the same block hash with other fields, or the same block hash with another time, is a
 * BadResponseError naming contract, block and field — a conflicting duplicate never silently overwrites the
 * first. Everything else is kept, with a warning naming contract, block and row:
 * - that row repeated identically at the top of the page is dropped (it would merge to nothing);
 * - the same transfer or block under another block hash: the chain reorganized between the two requests, the
 *   later answer is stored and the next run's re-read of the blocks settles it;
 * - rows at or before the previous row (paging stepped back): they merge again, as a re-read does.
 *
 * @example
 * continuePage(lastOfPage1, page2, query)
 * // → page2 without its first row when that row repeats lastOfPage1 exactly, with a warning
 * // or throws: contract 0x…, block 17000000, tokenTransfers[0].value: the same transfer … in the same block (0x…) as the last row of the previous page, which said "5", got "4"
 */
export function continuePage(previous: TransferRecord | undefined, page: TransfersPage, query: TransfersPageQuery): TransfersPage {
  const first = page.transfers[0];
  if (!previous || !first) return page;
  const contract = query.contract.toLowerCase();
  const at = `${describeContext({ contract, block: first.blockNumber })}, tokenTransfers[0]`;
  const transfer = `the same transfer (transactionHash ${previous.transactionHash}, logIndex ${previous.logIndex})`;
  const summary = `getTokenTransfers answered a page that contradicts the previous one for ${describeContext({ contract, fromBlock: query.fromBlock, toBlock: query.toBlock })}`;
  const samePosition =
    (first.blockNumber === previous.blockNumber && first.logIndex === previous.logIndex) ||
    (first.transactionHash === previous.transactionHash && first.logIndex === previous.logIndex);
  const sameBlock = first.blockHash === previous.blockHash;
  const warn = (text: string): TransfersPage => ({ ...page, warnings: [...page.warnings, `${at}: ${text}`] });

  if (samePosition && sameTransfer(first, previous)) {
    const rest = { ...page, count: page.count - 1, transfers: page.transfers.slice(1) };
    return continuePage(previous, { ...rest, warnings: [...page.warnings, `${at}: ${transfer} as the last row of the previous page, served twice; kept once`] }, query);
  }
  const fields = TRANSFER_KEYS.filter((key) => first[key] !== previous[key]);
  if (samePosition && sameBlock) {
    throw new BadResponseError(
      summary,
      fields.map(
        (field) =>
          `${at}.${field}: ${transfer} in the same block (${previous.blockHash}) as the last row of the previous page, which said ${show(previous[field])}, got ${show(first[field])}`,
      ),
    );
  }
  if (samePosition) {
    return warn(
      `${transfer} as the last row of the previous page, now in block ${first.blockNumber} (${first.blockHash}) instead of block ${previous.blockNumber} (${previous.blockHash}), differing in ${fields.join(', ')}: the chain reorganized between the two pages; this answer is stored, and the next run's re-read settles it`,
    );
  }
  if (sameBlock && first.blockTimestamp !== previous.blockTimestamp) {
    throw new BadResponseError(summary, [
      `${at}.blockTimestamp: expected ${show(previous.blockTimestamp)} as in the previous page's last row of the same block (${previous.blockHash}), got ${show(first.blockTimestamp)}`,
    ]);
  }
  if (!(first.blockNumber < previous.blockNumber || (first.blockNumber === previous.blockNumber && first.logIndex < previous.logIndex))) {
    return warn(
      `expected rows after the previous page's last row (block ${previous.blockNumber} log ${previous.logIndex}), got block ${first.blockNumber} log ${first.logIndex}: paging stepped back; rows read again merge as in a re-read`,
    );
  }
  if (first.blockNumber === previous.blockNumber && !sameBlock) {
    return warn(
      `block ${first.blockNumber} has hash ${first.blockHash} here and ${previous.blockHash} on the previous page: the chain reorganized between the two pages; the next run's re-read settles it`,
    );
  }
  return page;
}
