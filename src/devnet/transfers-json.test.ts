import { describe, expect, it } from 'vitest';
import { generateSyntheticDataset } from './synthetic.ts';
import { transfersJson } from './transfers-json.ts';

describe('transfersJson', () => {
  it('writes what JSON.stringify would, without contractAddress, in the spec’s key order', () => {
    const { transfers } = generateSyntheticDataset({ seed: 2, blocks: 50, tokens: 3, transfers: 300, startBlock: 0 });
    const expected = transfers.map(({ contractAddress: _c, ...rest }) => ({
      fromAddress: rest.fromAddress,
      toAddress: rest.toAddress,
      value: rest.value,
      blockHash: rest.blockHash,
      blockNumber: rest.blockNumber,
      blockTimestamp: rest.blockTimestamp,
      transactionHash: rest.transactionHash,
      transactionIndex: rest.transactionIndex,
      logIndex: rest.logIndex,
    }));
    expect(transfersJson(transfers)).toBe(JSON.stringify(expected));
    expect(transfersJson([])).toBe('[]');
  });
});
