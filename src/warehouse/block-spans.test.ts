import { describe, expect, it } from 'vitest';
import { mergeSpans } from './block-spans.ts';

describe('mergeSpans', () => {
  it('joins spans that overlap or touch, and keeps apart those with a gap', () => {
    expect(
      mergeSpans([
        { fromBlock: 20, toBlock: 30 },
        { fromBlock: 5, toBlock: 9 },
        { fromBlock: 0, toBlock: 4 },
        { fromBlock: 25, toBlock: 26 },
        { fromBlock: 32, toBlock: 40 },
      ]),
    ).toEqual([
      { fromBlock: 0, toBlock: 9 },
      { fromBlock: 20, toBlock: 30 },
      { fromBlock: 32, toBlock: 40 },
    ]);
  });

  it('gives one span for the same range of several contracts, and nothing for nothing', () => {
    const same = { fromBlock: 100, toBlock: 199 };
    expect(mergeSpans([same, same, same])).toEqual([same]);
    expect(mergeSpans([])).toEqual([]);
  });
});
