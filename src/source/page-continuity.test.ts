import { describe, expect, it } from 'vitest';
import type { TransferRecord } from '../dataset/types.ts';
import { BadResponseError } from './errors.ts';
import { continuePage } from './page-continuity.ts';
import { h, transferRow } from './test-rows.ts';
import type { TransfersPage } from './transfers-page.ts';

const USDC = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
const QUERY = { contract: USDC, fromBlock: 17_000_000, toBlock: 17_000_100 };

function row(blockNumber: number, logIndex: number, extra: Partial<TransferRecord> = {}): TransferRecord {
  return { contractAddress: USDC, ...transferRow(blockNumber, logIndex), ...extra };
}

function page(transfers: TransferRecord[]): TransfersPage {
  return { token: { contractAddress: USDC, name: null, symbol: null, decimals: null }, count: transfers.length, nextPageKey: 'k2', transfers, warnings: [] };
}

function problemsOf(previous: TransferRecord, next: TransfersPage): string[] {
  try {
    continuePage(previous, next, QUERY);
  } catch (err) {
    expect(err).toBeInstanceOf(BadResponseError);
    return [...(err as BadResponseError).problems];
  }
  throw new Error('the page was accepted');
}

describe('continuePage', () => {
  const previous = row(17_000_050, 3);

  it('passes a page that goes on strictly after the previous page’s last row, and any first page', () => {
    const next = page([row(17_000_050, 2), row(17_000_049, 7)]);
    expect(continuePage(previous, next, QUERY)).toBe(next);
    expect(continuePage(undefined, next, QUERY)).toBe(next);
    expect(continuePage(previous, page([]), QUERY).transfers).toEqual([]);
  });

  it('drops the previous page’s last row repeated identically at the top, with a warning naming contract, block and row', () => {
    const rest = [row(17_000_050, 2), row(17_000_049, 7)];
    const out = continuePage(previous, page([{ ...previous }, ...rest]), QUERY);
    expect(out.transfers).toEqual(rest);
    expect(out.count).toBe(2);
    expect(out.warnings).toEqual([
      `contract ${USDC}, block 17000050, tokenTransfers[0]: the same transfer (transactionHash ${previous.transactionHash}, logIndex 3) as the last row of the previous page, served twice; kept once`,
    ]);
  });

  it('refuses the same transfer in the same block with another value, naming contract, block and field: it must not overwrite the first', () => {
    expect(problemsOf(previous, page([{ ...previous, value: '999' }]))).toEqual([
      `contract ${USDC}, block 17000050, tokenTransfers[0].value: the same transfer (transactionHash ${previous.transactionHash}, logIndex 3) in the same block (${previous.blockHash}) as the last row of the previous page, which said "1000000", got "999"`,
    ]);
    // the same log position under another transaction hash, same block: a conflict too
    expect(problemsOf(previous, page([{ ...previous, transactionHash: h('f') }]))).toEqual([expect.stringContaining('tokenTransfers[0].transactionHash: the same transfer')]);
  });

  it('refuses the same block hash with another time across the page boundary', () => {
    expect(problemsOf(previous, page([row(17_000_050, 1, { blockTimestamp: '2020-01-01T00:00:00.000Z' })]))).toEqual([
      `contract ${USDC}, block 17000050, tokenTransfers[0].blockTimestamp: expected "${previous.blockTimestamp}" as in the previous page's last row of the same block (${previous.blockHash}), got "2020-01-01T00:00:00.000Z"`,
    ]);
  });

  it('keeps, with a warning, what a reorg between the two pages explains: the transfer or the block under another hash', () => {
    const moved = { ...previous, blockNumber: 17_000_048, blockHash: h('e') };
    const out = continuePage(previous, page([moved]), QUERY);
    expect(out.transfers).toEqual([moved]);
    expect(out.warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `^contract ${USDC}, block 17000048, tokenTransfers\\[0\\]: the same transfer .* now in block 17000048 .* instead of block 17000050 .*differing in blockHash, blockNumber: the chain reorganized between the two pages`,
        ),
      ),
    ]);
    const rehashed = continuePage(previous, page([row(17_000_050, 1, { blockHash: h('e') })]), QUERY);
    expect(rehashed.transfers).toHaveLength(1);
    expect(rehashed.warnings).toEqual([expect.stringContaining(`block 17000050 has hash ${h('e')} here and ${previous.blockHash} on the previous page`)]);
  });

  it('keeps rows of a page that steps back, with a warning: they merge as a re-read does', () => {
    const out = continuePage(previous, page([row(17_000_051, 0), row(17_000_050, 2)]), QUERY);
    expect(out.transfers).toHaveLength(2);
    expect(out.warnings).toEqual([
      `contract ${USDC}, block 17000051, tokenTransfers[0]: expected rows after the previous page's last row (block 17000050 log 3), got block 17000051 log 0: paging stepped back; rows read again merge as in a re-read`,
    ]);
  });
});
