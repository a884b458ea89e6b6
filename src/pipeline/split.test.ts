import { describe, expect, it } from 'vitest';
import { MIN_SPLIT_PAGES, remainingRows, splitPoint } from './split.ts';

const chunk = { fromBlock: 0, toBlock: 999, resumeToBlock: 900, rows: 2000, done: false };

describe('remainingRows', () => {
  it('scales the rows found so far to the blocks not reached yet', () => {
    expect(remainingRows(chunk)).toBe(18_000);
    expect(remainingRows({ ...chunk, resumeToBlock: 999, rows: 10 })).toBe(9_990);
  });

  it('has no estimate before the first page, once done, or with nothing left below', () => {
    expect(remainingRows({ ...chunk, resumeToBlock: null })).toBeUndefined();
    expect(remainingRows({ ...chunk, done: true })).toBeUndefined();
    expect(remainingRows({ ...chunk, resumeToBlock: 0 })).toBeUndefined();
  });
});

describe('splitPoint', () => {
  it('gives away the lower half of the blocks below the lowest committed one', () => {
    expect(splitPoint(chunk, 1000)).toBe(449);
    // blocks 100…899 are unread: the new chunk takes 100…499, this one keeps 500…899 and what is left of 900
    expect(splitPoint({ ...chunk, fromBlock: 100 }, 1000)).toBe(499);
    expect(splitPoint({ ...chunk, fromBlock: 100, resumeToBlock: 103, rows: 10_000_000 }, 1000)).toBe(100);
  });

  it(`keeps a chunk whole when fewer than ${MIN_SPLIT_PAGES} pages are left or under two blocks`, () => {
    // 2000 rows over 100 blocks read, 200 blocks left: about 4000 rows
    const near = { fromBlock: 0, toBlock: 299, resumeToBlock: 200, rows: 2000, done: false };
    expect(splitPoint(near, 1000)).toBe(99);
    expect(splitPoint({ ...near, rows: 1999 }, 1000)).toBeUndefined();
    expect(splitPoint({ ...near, resumeToBlock: 1, rows: 1_000_000 }, 1000)).toBeUndefined();
    expect(splitPoint({ ...chunk, resumeToBlock: null }, 1000)).toBeUndefined();
  });
});
