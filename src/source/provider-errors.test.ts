import { describe, expect, it } from 'vitest';
import { parseLogsRefusal, timeoutRefusal } from './provider-errors.ts';

describe('parseLogsRefusal', () => {
  // node-source.md's table, verbatim
  it('reads Infura’s "more than 10000 results" as a results cap with a suggested range', () => {
    const message = 'query returned more than 10000 results. Try with this block range [0x11d8f10, 0x11d9b5c].';
    expect(parseLogsRefusal({ code: -32005, message })).toEqual({ code: -32005, message, maxResults: 10_000, suggested: { fromBlock: 0x11d8f10, toBlock: 0x11d9b5c } });
  });

  it('reads Infura’s "range exceeds limit" as a block-range limit', () => {
    const message = 'range 1000000 exceeds limit of 10000';
    expect(parseLogsRefusal({ code: -32602, message })).toEqual({ code: -32602, message, maxRange: 10_000 });
  });

  it('reads Alchemy’s "this block range should work" as a suggested range, and its 10K logs as a results cap', () => {
    const message =
      'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: [0x11d8f10, 0x11d92a0]';
    expect(parseLogsRefusal({ code: -32602, message })).toEqual({ code: -32602, message, maxResults: 10_000, suggested: { fromBlock: 0x11d8f10, toBlock: 0x11d92a0 } });
  });

  it('reads QuickNode’s "limited to a 10,000 range" as a block-range limit', () => {
    const message = 'eth_getLogs is limited to a 10,000 range';
    expect(parseLogsRefusal({ code: -32614, message })).toEqual({ code: -32614, message, maxRange: 10_000 });
  });

  it('reads Ankr’s "block range is too wide" as too large, with no hint', () => {
    expect(parseLogsRefusal({ code: -32600, message: 'block range is too wide' })).toEqual({ code: -32600, message: 'block range is too wide' });
  });

  it('reads reth’s "max results" as a results cap with a suggested range, even one equal to the range asked', () => {
    const message = 'query exceeds max results 20000, retry with the range 25766988-25775072';
    expect(parseLogsRefusal({ code: -32602, message })).toEqual({ code: -32602, message, maxResults: 20_000, suggested: { fromBlock: 25_766_988, toBlock: 25_775_072 } });
  });

  it('reads reth’s "max block range" as a block-range limit', () => {
    const message = 'query exceeds max block range 100000';
    expect(parseLogsRefusal({ code: -32602, message })).toEqual({ code: -32602, message, maxRange: 100_000 });
  });

  it('reads Arbitrum’s "logs matched by query exceeds limit" as a results cap', () => {
    const message = 'logs matched by query exceeds limit of 10000';
    expect(parseLogsRefusal({ code: -32000, message })).toEqual({ code: -32000, message, maxResults: 10_000 });
  });

  it('reads the OP-stack providers’ "backend response too large" and "Block range is too large" as too large, with no hint', () => {
    for (const message of ['backend response too large', 'Block range is too large']) {
      expect(parseLogsRefusal({ code: -32000, message })).toEqual({ code: -32000, message });
    }
  });

  it('reads the block-range limits other providers state', () => {
    const limits: [string, number][] = [
      ['Max range: 3500', 3500],
      ['maximum block range: 50000', 50_000],
      ['block range is too wide (maximum 1024)', 1024],
      ['eth_getLogs is limited to 1,024 block range', 1024],
      ['please limit the query to at most 1000 blocks', 1000],
      ['requested too many blocks from 0 to 5000, maximum is set to 2048', 2048],
      ['ranges over 10000 blocks are not supported on freetier', 10_000],
    ];
    for (const [message, maxRange] of limits) expect(parseLogsRefusal({ code: -32000, message }), message).toMatchObject({ maxRange });
    expect(parseLogsRefusal({ code: -32000, message: 'block range too large' })).toEqual({ code: -32000, message: 'block range too large' });
  });

  it('finds a hint in a text `data` too', () => {
    expect(parseLogsRefusal({ code: -32000, message: 'request failed', data: 'query exceeds max block range 5000' })).toMatchObject({ maxRange: 5000 });
  });

  it('does not read rate limits or other errors as too large', () => {
    for (const error of [
      { code: -32005, message: 'daily request count exceeded, request rate limited' },
      { code: -32602, message: 'invalid argument 0: hex string has odd length' },
      { code: -32000, message: 'header not found' },
      { code: 429, message: 'Too Many Requests' },
      {},
    ]) {
      expect(parseLogsRefusal(error), JSON.stringify(error)).toBeUndefined();
    }
  });

  it('reads a timeout as a refusal with no hint', () => {
    expect(timeoutRefusal(30_000)).toEqual({ code: undefined, message: 'no answer within 30 s', timedOut: true });
    expect(timeoutRefusal(1500).message).toBe('no answer within 1500 ms');
  });
});
