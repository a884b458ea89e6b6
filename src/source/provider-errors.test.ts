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

  it('reads Ankr’s "block range is too wide" as too large, naming blocks, with no number', () => {
    expect(parseLogsRefusal({ code: -32600, message: 'block range is too wide' })).toEqual({ code: -32600, message: 'block range is too wide', blocks: true });
    // Moonbeam's states it
    expect(parseLogsRefusal({ code: -32600, message: 'block range is too wide (maximum 1024)' })).toEqual({
      code: -32600,
      message: 'block range is too wide (maximum 1024)',
      maxRange: 1024,
    });
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

  it('reads the OP-stack providers’ "backend response too large" and "Block range is too large" as too large, with no number, the second naming blocks', () => {
    expect(parseLogsRefusal({ code: -32000, message: 'backend response too large' })).toEqual({ code: -32000, message: 'backend response too large' });
    expect(parseLogsRefusal({ code: -32000, message: 'Block range is too large' })).toEqual({ code: -32000, message: 'Block range is too large', blocks: true });
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
    expect(parseLogsRefusal({ code: -32000, message: 'block range too large' })).toEqual({ code: -32000, message: 'block range too large', blocks: true });
  });

  it('reads QuickNode’s results cap as a results cap, never as a block range: its range message says "range"', () => {
    for (const message of ['eth_getLogs is limited to 10000 results', 'eth_getLogs is limited to 10,000 results', 'eth_getLogs is limited to a 10,000 results']) {
      expect(parseLogsRefusal({ code: -32614, message }), message).toEqual({ code: -32614, message, maxResults: 10_000 });
    }
    expect(parseLogsRefusal({ code: -32614, message: 'response is limited to 5000 logs' })).toEqual({
      code: -32614,
      message: 'response is limited to 5000 logs',
      maxResults: 5000,
    });
    // the same words with blocks or a range are a block range
    for (const [message, maxRange] of [
      ['eth_getLogs is limited to a 10,000 range', 10_000],
      ['eth_getLogs is limited to a 1000 blocks range', 1000],
      ['eth_getLogs is limited to a 2000 block range', 2000],
      ['eth_getLogs is limited to 1024 blocks', 1024],
    ] as const) {
      expect(parseLogsRefusal({ code: -32614, message }), message).toEqual({ code: -32614, message, maxRange });
    }
  });

  it('never reads a results cap as a block-range limit, whoever words it', () => {
    const caps: [string, number | undefined][] = [
      ['eth_getLogs is limited to 10,000 results', 10_000],
      ['query returned more than 10000 results', 10_000],
      ['Query returned more than 10000 results. Try with this block range [0x10, 0x20].', 10_000],
      ['query exceeds max results 20000, retry with the range 25766988-25775072', 20_000],
      ['query exceeds max results', undefined],
      ['exceeded max results: 5000', 5000],
      ['logs matched by query exceeds limit of 10000', 10_000],
      ['You can request any block range with a cap of 10K logs in the response.', 10_000],
    ];
    for (const [message, maxResults] of caps) {
      const refusal = parseLogsRefusal({ code: -32000, message });
      expect(refusal, message).toBeDefined();
      expect(refusal?.maxRange, message).toBeUndefined();
      expect(refusal?.maxResults, message).toBe(maxResults);
    }
    // "maximum is set to" is Avalanche's block limit only after "too many blocks": elsewhere it may count logs
    expect(parseLogsRefusal({ code: -32000, message: 'too many logs, maximum is set to 10000' })?.maxRange).toBeUndefined();
  });

  it('reads the block-range limits @ponder/utils records besides, and its refusals without a number as too large', () => {
    const limits: [string, number][] = [
      ['Maximum allowed number of requested blocks is 1000', 1000],
      ['maximum [from, to] blocks distance: 10000', 10_000],
      ['block range greater than 1000 max', 1000],
      ['block range exceeds 1000', 1000],
      ['eth_getLogs range is too large, max is 10k blocks', 10_000],
      ['query must be smaller than size 1024', 1024],
      ['exceeds the range allowed for your plan (5000 > 1000)', 1000],
      ['exceed max block range: 5000', 5000],
    ];
    for (const [message, maxRange] of limits) expect(parseLogsRefusal({ code: -32000, message }), message).toEqual({ code: -32000, message, maxRange });
    for (const message of ['Block range limit exceeded.', 'allowed block range threshold exceeded']) {
      expect(parseLogsRefusal({ code: -32000, message }), message).toEqual({ code: -32000, message, blocks: true });
    }
    const bytes = 'response size should not greater than 10000000 bytes';
    expect(parseLogsRefusal({ code: -32000, message: bytes })).toEqual({ code: -32000, message: bytes });
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
