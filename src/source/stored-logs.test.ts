import { describe, expect, it } from 'vitest';
import { bucketBlocksFor, STORED_BUCKETS, type StoredLogs, storedSpan } from './stored-logs.ts';

/** Rows per block `perBlock(b)` over [fromBlock, toBlock], in buckets of `bucketBlocks`, read in full over `covered`. */
function stored(fromBlock: number, toBlock: number, bucketBlocks: number, perBlock: (block: number) => number, covered = [{ fromBlock, toBlock }]): StoredLogs {
  const counts = new Int32Array(Math.ceil((toBlock - fromBlock + 1) / bucketBlocks));
  for (let b = fromBlock; b <= toBlock; b++) counts[Math.floor((b - fromBlock) / bucketBlocks)]! += perBlock(b);
  return { fromBlock, bucketBlocks, counts, covered };
}

const WIDE = { longest: 100_000, range: 10 };

describe('storedSpan', () => {
  it('asks as many blocks down from the top as hold at most the target, counted per bucket', () => {
    const tens = stored(1000, 1999, 5, () => 10);
    // 70 rows: 7 blocks, but buckets of 5 take 5 (the bucket holding the top is counted whole)
    expect(storedSpan([tens], 1999, { target: 70, ...WIDE })).toBe(5);
    expect(storedSpan([tens], 1999, { target: 100, ...WIDE })).toBe(10);
    // a top inside a bucket: the blocks of its bucket below it, then whole buckets
    expect(storedSpan([tens], 1997, { target: 100, ...WIDE })).toBe(8);
  });

  it('follows the rows where they change: a busy stretch gets a short span, a quiet one a long span', () => {
    const s = stored(0, 9999, 1, (b) => (b >= 5000 ? 20 : 2));
    expect(storedSpan([s], 9999, { target: 7000, ...WIDE })).toBe(350);
    expect(storedSpan([s], 4999, { target: 7000, ...WIDE })).toBe(3500);
    // across the change: 100 busy blocks (2,000 rows), then 2,500 quiet ones
    expect(storedSpan([s], 5099, { target: 7000, ...WIDE })).toBe(2600);
  });

  it('adds the rows of every contract of the call, each bucket once, whatever their buckets', () => {
    const a = stored(0, 999, 3, () => 1);
    const b = stored(100, 999, 7, () => 2);
    // 3 rows a block together: at most 300 rows in 100 blocks, less the blocks of the partly counted top buckets
    const span = storedSpan([a, b], 999, { target: 300, ...WIDE })!;
    expect(span).toBeGreaterThanOrEqual(88);
    expect(span).toBeLessThanOrEqual(100);
  });

  it('gives no span where the top was not read in full for each contract of the call', () => {
    const read = stored(0, 999, 1, () => 1);
    const unread = stored(0, 999, 1, () => 1, [{ fromBlock: 0, toBlock: 899 }]);
    expect(storedSpan([read, unread], 950, { target: 50, ...WIDE })).toBeUndefined();
    expect(storedSpan([read, unread], 899, { target: 50, ...WIDE })).toBe(25);
    expect(storedSpan([], 899, { target: 50, ...WIDE })).toBeUndefined();
  });

  it('ends at the blocks not read in full, unless the range reaches further', () => {
    const s = stored(0, 999, 1, () => 1, [
      { fromBlock: 0, toBlock: 99 },
      { fromBlock: 500, toBlock: 999 },
    ]);
    // blocks 500–999 hold 500 rows, under the target of 800: the rows below 500 are not known
    expect(storedSpan([s], 999, { target: 800, longest: 100_000, range: 300 })).toBe(500);
    expect(storedSpan([s], 999, { target: 800, longest: 100_000, range: 700 })).toBe(700);
    expect(storedSpan([s], 999, { target: 800, longest: 600, range: 700 })).toBe(600);
  });

  it('stays within the most blocks a call may ask', () => {
    expect(storedSpan([stored(0, 9999, 4, () => 0)], 9999, { target: 7000, longest: 2000, range: 500 })).toBe(2000);
  });

  it('asks the blocks of the top’s bucket alone where they hold more than the target', () => {
    expect(storedSpan([stored(0, 999, 10, (b) => (b === 995 ? 500 : 1))], 999, { target: 400, ...WIDE })).toBe(10);
    expect(storedSpan([stored(0, 999, 10, (b) => (b === 995 ? 500 : 1))], 997, { target: 400, ...WIDE })).toBe(8);
    expect(storedSpan([stored(0, 999, 1, (b) => (b === 995 ? 500 : 1))], 995, { target: 400, ...WIDE })).toBe(1);
    expect(storedSpan([stored(0, 999, 10, (b) => (b === 985 ? 500 : 1))], 999, { target: 400, ...WIDE })).toBe(10);
  });

  it('gives no span for a top outside the counted query', () => {
    const s = stored(1000, 1999, 5, () => 1, [{ fromBlock: 0, toBlock: 5000 }]);
    expect(storedSpan([s], 2000, { target: 50, ...WIDE })).toBeUndefined();
    expect(storedSpan([s], 999, { target: 50, ...WIDE })).toBeUndefined();
  });
});

describe('bucketBlocksFor', () => {
  it('counts per block up to STORED_BUCKETS blocks, then in as few blocks a bucket as keep the buckets within it', () => {
    expect(bucketBlocksFor(1)).toBe(1);
    expect(bucketBlocksFor(STORED_BUCKETS)).toBe(1);
    expect(bucketBlocksFor(STORED_BUCKETS + 1)).toBe(2);
    expect(bucketBlocksFor(25_000)).toBe(4);
    expect(Math.ceil(1_000_000 / bucketBlocksFor(1_000_000))).toBeLessThanOrEqual(STORED_BUCKETS);
  });
});
