import { describe, expect, it } from 'vitest';
import type { TransferRecord } from '../dataset/types.ts';
import { type ChainLog, chainLogOf, rpcLog, type StoredLog, transferLog } from './chain-log.ts';
import { createChainStore } from './chain-store.ts';
import { foreignLogBody, syntheticForeignLogs } from './foreign-logs.ts';
import { LogsAnswer } from './logs-answer.ts';
import { generateSyntheticDataset, SYNTHETIC_DEFAULTS } from './synthetic.ts';

// a transfer of the synthetic chain, with the largest value and the zero address (a burn)
const row: TransferRecord = {
  ...generateSyntheticDataset({ ...SYNTHETIC_DEFAULTS, blocks: 5, tokens: 1, transfers: 5 }).transfers[0]!,
  toAddress: `0x${'00'.repeat(20)}`,
  value: String(2n ** 256n - 1n),
};
const placed = (body: Pick<ChainLog, 'address' | 'topics' | 'data'>, at: Partial<ChainLog> = {}): ChainLog => ({
  ...transferLog(row),
  ...body,
  logIndex: 300,
  transactionIndex: 0,
  ...at,
});
const [nft, from, to] = [row.contractAddress, row.fromAddress, row.toAddress];

/** Every shape of log the store holds, and numbers of every length a quantity can have. */
const logs: StoredLog[] = [
  row,
  { ...row, value: '0', blockNumber: 0, logIndex: 0, transactionIndex: 0, blockTimestamp: '1970-01-01T00:00:00.000Z' },
  { ...row, value: '255', fromAddress: '0x', toAddress: 'x' },
  ...Array.from({ length: 14 }, (_, i): TransferRecord => ({ ...row, value: String(16 ** i), blockNumber: 16 ** i - 1, logIndex: 16 ** i, transactionIndex: 2 ** 53 - 1 })),
  // numbers no dataset file holds (readDataset refuses them), written as toQuantity writes them
  { ...row, value: '1', blockTimestamp: '2286-11-20T17:46:39.000Z', blockNumber: 2 ** 64, transactionIndex: 2 ** 80, logIndex: 2 ** 53 },
  placed(foreignLogBody('erc721', nft, from, to, 7n)),
  placed(foreignLogBody('wide-data', nft, from, to, 10n ** 30n)),
  placed(foreignLogBody('unindexed', nft, from, to, 1n)),
  placed({ address: nft, topics: [], data: '0x' }),
  // past 2^53 a quantity is written as toQuantity writes it
  placed({ address: nft, topics: [], data: '0x' }, { blockNumber: 2 ** 60, logIndex: 2 ** 53, blockTimestamp: 2 ** 70 }),
];

/**
 * The bytes an answer writes from `at` into memory of `junk` that ends at its bound (a write past it would be lost),
 * and where they end, checked to be within that bound.
 */
function written(answer: LogsAnswer, at: number, junk: number): { text: string; end: number; bound: number } {
  const bound = answer.jsonBound();
  const bytes = Buffer.alloc(at + bound, junk);
  const end = answer.writeJson(bytes, at);
  expect(end - at).toBeLessThanOrEqual(bound);
  return { text: bytes.toString('latin1', at, end), end, bound };
}

describe('an eth_getLogs answer', () => {
  it('writes the bytes JSON.stringify gives of its logs as geth answers them, for every shape the store holds', () => {
    for (const log of logs) expect(written(new LogsAnswer([log]), 0, 0).text).toBe(JSON.stringify([rpcLog(chainLogOf(log))]));
    const all = new LogsAnswer(logs);
    expect(written(all, 0, 0).text).toBe(JSON.stringify(all.toJSON()));
    expect(JSON.stringify(all)).toBe(JSON.stringify(logs.map((log) => rpcLog(chainLogOf(log)))));
    expect(written(new LogsAnswer([]), 0, 0x2a).text).toBe('[]');
  });

  it('writes a synthetic chain’s logs as they are answered, from any offset, in memory an earlier answer filled', () => {
    const options = { ...SYNTHETIC_DEFAULTS, blocks: 40, tokens: 3, transfers: 600 };
    const chain = createChainStore(generateSyntheticDataset(options), syntheticForeignLogs(options));
    const stored = chain.storedLogs(options.startBlock, options.startBlock + options.blocks - 1);
    expect(stored.some((log) => !('fromAddress' in log))).toBe(true);
    const answer = new LogsAnswer(stored);
    const rpcLogs = chain.logs(options.startBlock, options.startBlock + options.blocks - 1).map(rpcLog);
    const expected = JSON.stringify(rpcLogs);
    // the bound is exact but for each quantity's digits short of 14 (`0x` and up to 14 digits: 16 bytes), and a value's
    // decimal digits past 64 (its hex has 64 at most)
    const quantities = (log: (typeof rpcLogs)[number]) => [log.blockNumber, log.blockTimestamp, log.transactionIndex, log.logIndex];
    let unused = rpcLogs.reduce((n, log) => n + quantities(log).reduce((m, q) => m + 16 - q.length, 0), 0);
    for (const log of stored) if ('value' in log) unused += Math.max(0, log.value.length - 64);
    for (const [at, junk] of [
      [0, 0],
      [7, 0x22],
      [1000, 0xff],
    ] as const) {
      const { text, end, bound } = written(answer, at, junk);
      expect(text).toBe(expected);
      expect(bound - (end - at)).toBe(unused);
    }
  });

  it('fails on a field its log could not be made of, as making that log fails', () => {
    for (const bad of [
      { ...row, blockTimestamp: '2023-04-08T21:26:11.500Z' },
      { ...row, value: 'ten' },
      { ...row, logIndex: -1 },
    ]) {
      const error = (() => {
        try {
          rpcLog(transferLog(bad));
        } catch (err) {
          return err;
        }
      })();
      expect(error).toBeInstanceOf(Error);
      expect(() => written(new LogsAnswer([bad]), 0, 0)).toThrow((error as Error).constructor as new () => Error);
    }
  });
});
