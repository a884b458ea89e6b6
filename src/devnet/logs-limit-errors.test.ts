import { describe, expect, it } from 'vitest';
import { type LogsErrorStyle, type LogsLimits, logsLimitError, LOGS_ERROR_STYLES, suggestedRange } from './logs-limit-errors.ts';

// blocks 0x10 to 0x20 asked; 4 matching logs in blocks 16, 17, 20 and 30
const query = { from: 16, to: 32, logBlocks: [16, 17, 20, 30] };
const overResults = (style: LogsErrorStyle, extra: Partial<LogsLimits> = {}) => logsLimitError({ maxResults: 2, style, ...extra }, query);
const overRange = (style: LogsErrorStyle, extra: Partial<LogsLimits> = {}) => logsLimitError({ maxRange: 10, style, ...extra }, query);

describe('eth_getLogs limits: which one a query is over', () => {
  it('answers nothing for a query within both caps, or without caps', () => {
    expect(logsLimitError({ maxRange: 17, maxResults: 4, style: 'infura' }, query)).toBeUndefined();
    expect(logsLimitError({ style: 'infura' }, query)).toBeUndefined();
  });

  it('checks the block range first, then the number of logs', () => {
    expect(logsLimitError({ maxRange: 10, maxResults: 2, style: 'reth' }, query)?.limit).toBe('range');
    expect(logsLimitError({ maxRange: 17, maxResults: 2, style: 'reth' }, query)?.limit).toBe('results');
  });
});

describe('eth_getLogs limits: a suggested range', () => {
  it('ends before the block whose logs overflow the results cap', () => {
    expect(suggestedRange({ maxResults: 2, style: 'infura' }, query)).toEqual({ from: 16, to: 19 });
    expect(suggestedRange({ maxResults: 3, style: 'infura' }, query)).toEqual({ from: 16, to: 29 });
  });

  it('also stays within the range cap', () => {
    expect(suggestedRange({ maxResults: 3, maxRange: 5, style: 'infura' }, query)).toEqual({ from: 16, to: 20 });
  });

  it('is the first block alone when that block overflows: for a one-block query, the range asked', () => {
    const oneBlock = { from: 16, to: 16, logBlocks: [16, 16, 16] };
    expect(suggestedRange({ maxResults: 2, style: 'reth' }, oneBlock)).toEqual({ from: 16, to: 16 });
    expect(logsLimitError({ maxResults: 2, style: 'reth' }, oneBlock)?.message).toBe('query exceeds max results 2, retry with the range 16-16');
  });
});

describe('eth_getLogs limits: each provider’s answer (node-source.md’s table)', () => {
  it('infura: -32005 with a block range that fits, -32602 over the range cap', () => {
    expect(overResults('infura')).toEqual({
      limit: 'results',
      code: -32005,
      message: 'query returned more than 2 results. Try with this block range [0x10, 0x13].',
      data: { from: '0x10', to: '0x13', limit: 2 },
    });
    expect(overRange('infura')).toEqual({ limit: 'range', code: -32602, message: 'range 17 exceeds limit of 10' });
  });

  it('alchemy: -32602 naming its caps and a range that should work, for either limit', () => {
    const message = (to: string) =>
      'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, ' +
      `or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: [0x10, ${to}]`;
    expect(
      logsLimitError({ maxRange: 2000, maxResults: 10_000, style: 'alchemy' }, { ...query, logBlocks: Array.from({ length: 10_001 }, (_, i) => 16 + Math.floor(i / 5000)) }),
    ).toEqual({
      limit: 'results',
      code: -32602,
      message: message('0x11'),
    });
    expect(overResults('alchemy')?.message).toMatch(/cap of 2 logs in the response\. .* should work: \[0x10, 0x13\]$/);
    expect(logsLimitError({ maxRange: 10, style: 'alchemy' }, query)?.message).toMatch(/up to a 10 block range .* should work: \[0x10, 0x19\]$/);
  });

  it('quicknode: -32614 naming the cap with thousands separators, a range or results, never the one for the other', () => {
    expect(logsLimitError({ maxRange: 10_000, style: 'quicknode' }, { from: 0, to: 20_000, logBlocks: [] })).toEqual({
      limit: 'range',
      code: -32614,
      message: 'eth_getLogs is limited to a 10,000 range',
    });
    expect(overResults('quicknode')).toEqual({ limit: 'results', code: -32614, message: 'eth_getLogs is limited to 2 results' });
    const many = { from: 0, to: 1, logBlocks: Array.from({ length: 10_001 }, () => 0) };
    expect(logsLimitError({ maxResults: 10_000, style: 'quicknode' }, many)?.message).toBe('eth_getLogs is limited to 10,000 results');
  });

  it('ankr: -32600, no hint', () => {
    expect(overRange('ankr')).toEqual({ limit: 'range', code: -32600, message: 'block range is too wide' });
    expect(overResults('ankr')).toEqual({ limit: 'results', code: -32600, message: 'block range is too wide' });
  });

  it('reth: -32602 with a decimal range to retry, or the max block range', () => {
    expect(overResults('reth')).toEqual({ limit: 'results', code: -32602, message: 'query exceeds max results 2, retry with the range 16-19' });
    expect(overRange('reth')).toEqual({ limit: 'range', code: -32602, message: 'query exceeds max block range 10' });
  });

  it('arbitrum: -32000, no hint', () => {
    expect(overResults('arbitrum')).toEqual({ limit: 'results', code: -32000, message: 'logs matched by query exceeds limit of 2' });
    expect(overRange('arbitrum')).toMatchObject({ code: -32000, message: 'logs matched by query exceeds limit of 10' });
  });

  it('every style answers both limits', () => {
    for (const style of LOGS_ERROR_STYLES) {
      expect(overRange(style)?.limit, style).toBe('range');
      expect(overResults(style)?.limit, style).toBe('results');
    }
  });
});
