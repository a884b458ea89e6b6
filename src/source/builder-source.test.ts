import { describe, expect, it } from 'vitest';
import type { TransferRecord } from '../dataset/types.ts';
import type { TransfersPage } from './transfers-page.ts';
import { createBuilderSource, resolveHead } from './builder-source.ts';

function pageWith(blockNumber: number | undefined): TransfersPage {
  const transfers = blockNumber === undefined ? [] : [{ blockNumber } as TransferRecord];
  return { token: { contractAddress: '0x', name: null, symbol: null, decimals: null }, count: transfers.length, nextPageKey: undefined, transfers, warnings: [] };
}

describe('resolveHead', () => {
  it('takes eth_blockNumber when the endpoint answers it', async () => {
    const asked: string[] = [];
    const head = await resolveHead(
      { blockNumber: async () => 123 },
      {
        fetchPage: async (q) => {
          asked.push(q.contract);
          return pageWith(1);
        },
      },
      ['0xa'],
    );
    expect(head).toEqual({ head: 123, from: 'eth_blockNumber' });
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
    expect(head).toEqual({ head: 150, from: 'newest transfer' });
  });
});

describe('createBuilderSource', () => {
  const token = (contractAddress: string, name: string) => ({ contractAddress, name, symbol: null, decimals: 6 });
  const clients = (asked: string[]) => ({
    http: { close: async () => undefined } as never,
    rpc: { blockNumber: async () => 7, headersByHash: async () => new Map(), batchSize: 25 },
    transfers: {
      fetchPage: async (q: { contract: string; pageSize: number }) => {
        asked.push(`${q.contract}/${q.pageSize}`);
        return { ...pageWith(5), token: token(q.contract, `token of ${q.contract} #${asked.length}`) };
      },
    },
    counters: { transferRequests: 0, rpcPosts: 0, headerCalls: 0, retries: 0, rateLimited: 0, errors: {} },
  });

  it('answers token metadata from the last page read of the contract, without another request', async () => {
    const asked: string[] = [];
    const source = createBuilderSource(clients(asked));
    await source.fetchPage({ contract: '0xa', fromBlock: 0, toBlock: 9, pageSize: 100 });
    expect(await source.tokenMetadata('0xa')).toEqual(token('0xa', 'token of 0xa #1'));
    expect(asked).toEqual(['0xa/100']);
  });

  it('asks for one row to learn the metadata of a contract it has read no page of', async () => {
    const asked: string[] = [];
    const source = createBuilderSource(clients(asked));
    expect((await source.tokenMetadata('0xb')).name).toBe('token of 0xb #1');
    expect(asked).toEqual(['0xb/1']);
  });

  it('tells the head and the header batch size of its JSON-RPC client', async () => {
    const source = createBuilderSource(clients([]));
    expect(await source.chainHead(['0xa'])).toEqual({ head: 7, from: 'eth_blockNumber' });
    expect(source.headerBatchSize).toBe(25);
  });
});
