import { describe, expect, it } from 'vitest';
import { generateSyntheticDataset } from './synthetic.ts';
import { transfersJson, transfersJsonParts } from './transfers-json.ts';

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

  it('cuts the same text into parts of at most 100 rows', () => {
    const { transfers } = generateSyntheticDataset({ seed: 3, blocks: 50, tokens: 2, transfers: 250, startBlock: 0 });
    for (const n of [0, 1, 99, 100, 101, 250]) {
      const parts = transfersJsonParts(transfers.slice(0, n));
      expect(parts.join('')).toBe(transfersJson(transfers.slice(0, n)));
      expect(parts).toHaveLength(Math.max(1, Math.ceil(n / 100)) + (n > 0 && n % 100 === 0 ? 1 : 0));
    }
  });
});
