import { describe, expect, it } from 'vitest';
import type { TransferRecord } from '../dataset/types.ts';
import type { TransfersPage } from '../source/transfers-page.ts';
import { resolveHead } from './head.ts';

function pageWith(blockNumber: number | undefined): TransfersPage {
  const transfers = blockNumber === undefined ? [] : [{ blockNumber } as TransferRecord];
  return { token: { contractAddress: '0x', name: null, symbol: null, decimals: null }, count: transfers.length, nextPageKey: undefined, transfers, warnings: [] };
}

describe('resolveHead', () => {
  it('takes eth_blockNumber when the endpoint answers it', async () => {
    const asked: string[] = [];
    const head = await resolveHead({ blockNumber: async () => 123 }, { fetchPage: async (q) => (asked.push(q.contract), pageWith(1)) }, ['0xa']);
    expect(head).toEqual({ head: 123, source: 'eth_blockNumber' });
    expect(asked).toEqual([]);
  });

  it('falls back to the newest transfer of the job’s contracts where the endpoint lacks eth_blockNumber', async () => {
    const newest: Record<string, number | undefined> = { '0xa': 90, '0xb': 150, '0xc': undefined };
    const head = await resolveHead(
      { blockNumber: async () => undefined },
      {
        fetchPage: async (q) => {
          expect(q).toMatchObject({ pageSize: 1, fromBlock: 0 });
          return pageWith(newest[q.contract]);
        },
      },
      ['0xa', '0xb', '0xc'],
    );
    expect(head).toEqual({ head: 150, source: 'newest transfer' });
  });
});
