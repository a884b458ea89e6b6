import { describe, expect, it } from 'vitest';
import type { TransferRecord } from '../src/dataset/types.ts';
import { baselineCopyLine } from './copy-baseline.ts';

describe('baselineCopyLine', () => {
  it('writes the transfer columns in token_transfers order, then chain 1, and run 1 as both provenance columns', () => {
    const t: TransferRecord = {
      contractAddress: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
      fromAddress: '0x0000000000000000000000000000000000000001',
      toAddress: '0x0000000000000000000000000000000000000002',
      value: '115792089237316195423570985008687907853269984665640564039457584007913129639935',
      blockHash: `0x${'ab'.repeat(32)}`,
      blockNumber: 18_000_123,
      blockTimestamp: '2023-08-25T21:46:40.000Z',
      transactionHash: `0x${'cd'.repeat(32)}`,
      transactionIndex: 7,
      logIndex: 42,
    };
    expect(baselineCopyLine(t).split('\t')).toEqual([
      t.transactionHash,
      '42',
      t.contractAddress,
      t.fromAddress,
      t.toAddress,
      t.value,
      '18000123',
      t.blockHash,
      t.blockTimestamp,
      '7',
      '1',
      '1',
      '1\n',
    ]);
  });
});
