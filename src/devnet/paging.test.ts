import { describe, expect, it } from 'vitest';
import type { TransferRecord } from '../dataset/types.ts';
import { selectPage } from './paging.ts';

function row(blockNumber: number, logIndex: number): TransferRecord {
  return {
    contractAddress: '0x',
    fromAddress: '0x',
    toAddress: '0x',
    value: '1',
    blockHash: '0x',
    blockNumber,
    blockTimestamp: '',
    transactionHash: `0x${blockNumber}-${logIndex}`,
    transactionIndex: 0,
    logIndex,
  };
}

// newest first: 30/2, 30/1, 20/9, 20/4, 20/0, 10/5, 5/1
const list = [row(30, 2), row(30, 1), row(20, 9), row(20, 4), row(20, 0), row(10, 5), row(5, 1)];
const ids = (rows: TransferRecord[]) => rows.map((r) => `${r.blockNumber}/${r.logIndex}`);

describe('selectPage', () => {
  it('returns the newest rows of an inclusive block range', () => {
    const page = selectPage(list, { fromBlock: 10, toBlock: 20 }, 10);
    expect(ids(page.rows)).toEqual(['20/9', '20/4', '20/0', '10/5']);
    expect(page.more).toBe(false);
  });

  it('continues strictly after the last row served, across pages, each row once', () => {
    const seen: string[] = [];
    let after: { blockNumber: number; logIndex: number } | undefined;
    for (let i = 0; i < 10; i++) {
      const page = selectPage(list, { fromBlock: 0, toBlock: 100, ...(after ? { after } : {}) }, 2);
      seen.push(...ids(page.rows));
      const last = page.rows.at(-1);
      if (!page.more || !last) break;
      after = { blockNumber: last.blockNumber, logIndex: last.logIndex };
    }
    expect(seen).toEqual(ids(list));
  });

  it('says there is more only when the next page has rows in range', () => {
    expect(selectPage(list, { fromBlock: 20, toBlock: 30 }, 5).more).toBe(false);
    expect(selectPage(list, { fromBlock: 20, toBlock: 30 }, 4).more).toBe(true);
  });

  it('returns an empty page for a range without transfers', () => {
    expect(selectPage(list, { fromBlock: 11, toBlock: 19 }, 5)).toEqual({ rows: [], more: false });
    expect(selectPage([], { fromBlock: 0, toBlock: 9 }, 5)).toEqual({ rows: [], more: false });
  });
});
