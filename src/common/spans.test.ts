import { describe, expect, it } from 'vitest';
import { gaps, mergeSpans } from './spans.ts';

describe('mergeSpans and gaps', () => {
  it('merges overlapping and touching spans and finds the holes between them', () => {
    const merged = mergeSpans([
      { fromBlock: 50, toBlock: 60 },
      { fromBlock: 0, toBlock: 10 },
      { fromBlock: 11, toBlock: 20 },
      { fromBlock: 5, toBlock: 8 },
    ]);
    expect(merged).toEqual([
      { fromBlock: 0, toBlock: 20 },
      { fromBlock: 50, toBlock: 60 },
    ]);
    expect(gaps(merged)).toEqual([{ fromBlock: 21, toBlock: 49 }]);
    expect(mergeSpans([])).toEqual([]);
  });
});
