import { describe, expect, it } from 'vitest';
import { addressTopic, chainLogOf, TRANSFER_TOPIC } from './chain-log.ts';
import { createChainStore } from './chain-store.ts';
import { syntheticForeignLogs } from './foreign-logs.ts';
import { parseLogFilter, storedLogMatches, topicsMatch } from './log-filter.ts';
import { RpcFailure } from './rpc-errors.ts';
import { generateSyntheticDataset, SYNTHETIC_DEFAULTS } from './synthetic.ts';

const chain = { head: () => 1000, lowest: () => 10 };
const A = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2';
const B = '0xdac17f958d2ee523a2206206994597c13d831ec7';
const T0 = `0x${'11'.repeat(32)}`;
const T1 = `0x${'22'.repeat(32)}`;
const T2 = `0x${'33'.repeat(32)}`;
const parse = (filter: unknown) => parseLogFilter([filter], chain);
const failure = (filter: unknown) => {
  try {
    parse(filter);
  } catch (err) {
    if (err instanceof RpcFailure) return { code: err.code, message: err.message };
  }
  throw new Error('expected a failure');
};

describe('eth_getLogs filter', () => {
  it('defaults both ends to latest and keeps every address and topic', () => {
    expect(parse({})).toEqual({ blocks: { from: 1000, to: 1000 }, addresses: undefined, topics: [] });
  });

  it('reads hex block numbers and the tags earliest, latest, safe and finalized', () => {
    expect(parse({ fromBlock: '0x10', toBlock: '0x20' }).blocks).toEqual({ from: 16, to: 32 });
    expect(parse({ fromBlock: 'earliest', toBlock: 'latest' }).blocks).toEqual({ from: 10, to: 1000 });
    expect(parse({ fromBlock: 'finalized', toBlock: 'safe' }).blocks).toEqual({ from: 936, to: 968 });
  });

  it('takes one address or many, in any case, and an empty list as no filter', () => {
    expect(parse({ address: A.toUpperCase().replace('0X', '0x') }).addresses).toEqual(new Set([A]));
    expect(parse({ address: [A, B] }).addresses).toEqual(new Set([A, B]));
    expect(parse({ address: [] }).addresses).toBeUndefined();
  });

  it('reads topics by position: null for any, a value, or alternatives (a null among them: any)', () => {
    expect(parse({ topics: [T0, null, [T1, T2]] }).topics).toEqual([new Set([T0]), null, new Set([T1, T2])]);
    expect(parse({ topics: [[T0, null]] }).topics).toEqual([null]);
    expect(parse({ topics: [[]] }).topics).toEqual([null]);
  });

  it('takes blockHash alone, and refuses it beside fromBlock or toBlock', () => {
    expect(parse({ blockHash: T0 }).blocks).toEqual({ hash: T0 });
    expect(failure({ blockHash: T0, fromBlock: '0x1' })).toEqual({ code: -32602, message: expect.stringMatching(/cannot specify both BlockHash and FromBlock\/ToBlock/) });
  });

  it('refuses bad input with geth’s code -32602 and a message naming what is wrong', () => {
    expect(failure({ fromBlock: '0x20', toBlock: '0x10' })).toEqual({ code: -32602, message: 'invalid block range params' });
    expect(failure({ address: '0x12' }).message).toMatch(/invalid address: hex string has length 2, want 40/);
    expect(failure({ address: [A, 7] }).message).toMatch(/invalid address at index 1/);
    expect(failure({ topics: [T0, T0, T0, T0, T0] }).message).toMatch(/exceed max topics/);
    expect(failure({ topics: ['0x1234'] }).message).toMatch(/invalid topic 0: hex string has length 4, want 64/);
    expect(failure({ fromBlock: 'yesterday' }).message).toMatch(/is not a block number/);
    expect(failure('latest').message).toMatch(/cannot unmarshal string into Go value of type filters.FilterCriteria/);
    expect(() => parseLogFilter([], chain)).toThrow(/missing value for required argument 0/);
  });
});

describe('topic matching', () => {
  it('a log with fewer topics than the filter has positions never matches', () => {
    expect(topicsMatch([new Set([T0]), null, null], [T0])).toBe(false);
    expect(topicsMatch([new Set([T0]), null, null], [T0, T1, T2])).toBe(true);
  });

  it('a log with more topics than positions matches on the positions given (ERC-721 under an ERC-20 filter)', () => {
    expect(topicsMatch([new Set([T0])], [T0, T1, T2, T0])).toBe(true);
    expect(topicsMatch([], [])).toBe(true);
  });

  it('each position accepts any of its alternatives', () => {
    expect(topicsMatch([null, new Set([T1, T2])], [T0, T2])).toBe(true);
    expect(topicsMatch([null, new Set([T1, T2])], [T0, T0])).toBe(false);
  });

  it('matches a stored log (a transfer row, a foreign log) as it matches the topics of the log it stands for', () => {
    const options = { ...SYNTHETIC_DEFAULTS, blocks: 20, tokens: 2, transfers: 200 };
    const chain = createChainStore(generateSyntheticDataset(options), syntheticForeignLogs(options));
    const stored = chain.storedLogs(options.startBlock, options.startBlock + options.blocks - 1);
    const transfer = stored.find((log) => 'fromAddress' in log)!;
    const from = 'fromAddress' in transfer ? addressTopic(transfer.fromAddress) : '';
    const to = 'fromAddress' in transfer ? addressTopic(transfer.toAddress) : '';
    const tokenId = stored.map(chainLogOf).find((log) => log.topics.length === 4)!.topics[3]!;
    const filters = [
      [],
      [new Set([TRANSFER_TOPIC])],
      [null, new Set([from])],
      [null, null, new Set([to, from])],
      [new Set([TRANSFER_TOPIC]), new Set([to])],
      [null, null, null],
      [null, null, null, null],
      [null, null, null, new Set([tokenId])],
    ];
    let matched = 0;
    for (const filter of filters) {
      for (const log of stored) {
        expect(storedLogMatches(filter, log)).toBe(topicsMatch(filter, chainLogOf(log).topics));
        if (storedLogMatches(filter, log)) matched++;
      }
    }
    // the filters match some logs and miss others
    expect(matched).toBeGreaterThan(0);
    expect(matched).toBeLessThan(filters.length * stored.length);
    expect(stored.some((log) => !('fromAddress' in log))).toBe(true);
  });
});
