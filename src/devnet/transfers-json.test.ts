import { describe, expect, it } from 'vitest';
import { generateSyntheticDataset } from './synthetic.ts';
import type { TransferRecord } from '../dataset/types.ts';
import { transfersJson, transfersJsonSize, writeTransfersJson } from './transfers-json.ts';

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

  it('writes the same text into a buffer from any offset, ending exactly transfersJsonSize bytes later', () => {
    const { transfers } = generateSyntheticDataset({ seed: 3, blocks: 50, tokens: 2, transfers: 250, startBlock: 0 });
    for (const n of [0, 1, 2, 250]) {
      const rows = transfers.slice(0, n);
      const size = transfersJsonSize(rows);
      const bytes = Buffer.alloc(size + 7, 0x2a);
      expect(writeTransfersJson(rows, bytes, 3)).toBe(3 + size);
      expect(bytes.toString('latin1', 3, 3 + size)).toBe(JSON.stringify(rows.map(({ contractAddress: _c, ...rest }) => rest)));
      // nothing written outside its place
      expect(bytes.toString('latin1', 0, 3) + bytes.toString('latin1', 3 + size)).toBe('*******');
    }
  });

  it('writes numbers of every length, and values of any length, as JSON.stringify does', () => {
    const [base] = generateSyntheticDataset({ seed: 4, blocks: 5, tokens: 1, transfers: 1, startBlock: 0 }).transfers;
    const numbers = [0, 7, 9, 10, 99, 100, 18_000_000, 123_456_789, 2 ** 31, Number.MAX_SAFE_INTEGER];
    const rows: TransferRecord[] = numbers.map((n, i) => ({
      ...base!,
      blockNumber: n,
      transactionIndex: numbers[(i + 3) % numbers.length]!,
      logIndex: numbers[(i + 7) % numbers.length]!,
      value: '9'.repeat(i * 8 + 1),
    }));
    // numbers the chain never holds are written as JSON.stringify writes them, not as digits
    rows.push({ ...base!, blockNumber: -1, transactionIndex: 1.5, logIndex: 2 ** 60 });
    const expected = JSON.stringify(rows.map(({ contractAddress: _c, ...rest }) => rest));
    expect(transfersJson(rows)).toBe(expected);
    expect(transfersJsonSize(rows)).toBe(expected.length);
  });
});
