import { describe, expect, it } from 'vitest';
import type { LogsRefusal } from './provider-errors.ts';
import { countedRows, rowsProvedTooFew, rowsUpTo, type StoredLogs, storedSpan, storedWindow } from './stored-logs.ts';

/** A window of [fromBlock, toBlock] holding `perBlock(b)` rows in block b, read in full over `covered`. */
function stored(fromBlock: number, toBlock: number, perBlock: (block: number) => number, covered = [{ fromBlock, toBlock }]): StoredLogs {
  const blocks: number[] = [];
  const rows: number[] = [];
  for (let b = toBlock; b >= fromBlock; b--) {
    if (perBlock(b) === 0) continue;
    blocks.push(b);
    rows.push(perBlock(b));
  }
  return storedWindow({ fromBlock, toBlock, covered }, blocks, rows);
}

const WIDE = { longest: 100_000, range: 10 };

describe('storedSpan', () => {
  it('asks as many blocks down from the top as hold at most the target', () => {
    const tens = stored(1000, 1999, () => 10);
    expect(storedSpan([tens], 1999, { target: 70, ...WIDE })).toBe(7);
    expect(storedSpan([tens], 1999, { target: 79, ...WIDE })).toBe(7);
    expect(storedSpan([tens], 1997, { target: 100, ...WIDE })).toBe(10);
  });

  it('counts empty blocks as holding nothing, however many', () => {
    const sparse = stored(0, 9999, (b) => (b % 1000 === 0 ? 50 : 0));
    // blocks 9,000 and 8,000 hold 100 rows; 7,000 would make 150
    expect(storedSpan([sparse], 9999, { target: 120, ...WIDE })).toBe(2999);
  });

  it('follows the rows where they change: a busy stretch gets a short span, a quiet one a long span', () => {
    const s = stored(0, 9999, (b) => (b >= 5000 ? 20 : 2));
    expect(storedSpan([s], 9999, { target: 7000, ...WIDE })).toBe(350);
    expect(storedSpan([s], 4999, { target: 7000, ...WIDE })).toBe(3500);
    // across the change: 100 busy blocks (2,000 rows), then 2,500 quiet ones
    expect(storedSpan([s], 5099, { target: 7000, ...WIDE })).toBe(2600);
  });

  it('adds the rows of every contract of the call, block by block, whatever their windows', () => {
    const a = stored(0, 999, () => 1);
    const b = stored(100, 999, (block) => (block % 2 ? 4 : 0));
    // 3 rows a block together: 100 blocks hold 300
    expect(storedSpan([a, b], 999, { target: 300, ...WIDE })).toBe(100);
    expect(storedSpan([a, b], 999, { target: 301, ...WIDE })).toBe(100);
    expect(storedSpan([a, b], 999, { target: 305, ...WIDE })).toBe(101);
  });

  it('asks down to the newest block with rows where it alone holds more than the target', () => {
    const hot = stored(0, 999, (b) => (b === 995 ? 500 : b < 990 ? 1 : 0));
    expect(storedSpan([hot], 999, { target: 400, ...WIDE })).toBe(5);
    expect(storedSpan([hot], 995, { target: 400, ...WIDE })).toBe(1);
    expect(storedSpan([hot], 994, { target: 400, ...WIDE })).toBe(405);
  });

  it('gives no span where the top was not read in full for each contract of the call', () => {
    const read = stored(0, 999, () => 1);
    const unread = stored(0, 999, () => 1, [{ fromBlock: 0, toBlock: 899 }]);
    expect(storedSpan([read, unread], 950, { target: 50, ...WIDE })).toBeUndefined();
    expect(storedSpan([read, unread], 899, { target: 50, ...WIDE })).toBe(25);
    expect(storedSpan([], 899, { target: 50, ...WIDE })).toBeUndefined();
  });

  it('ends at the blocks not read in full, unless the range reaches further', () => {
    const s = stored(0, 999, () => 1, [
      { fromBlock: 0, toBlock: 99 },
      { fromBlock: 500, toBlock: 999 },
    ]);
    // blocks 500–999 hold 500 rows, under the target of 800: the rows below 500 are not known
    expect(storedSpan([s], 999, { target: 800, longest: 100_000, range: 300 })).toBe(500);
    expect(storedSpan([s], 999, { target: 800, longest: 100_000, range: 700 })).toBe(700);
    expect(storedSpan([s], 999, { target: 800, longest: 600, range: 700 })).toBe(600);
  });

  it('ends at its window’s first block as at blocks not read in full', () => {
    // the window holds blocks 500–999 of blocks read in full from 0
    const s = stored(500, 999, () => 1, [{ fromBlock: 0, toBlock: 999 }]);
    expect(storedSpan([s], 999, { target: 800, longest: 100_000, range: 300 })).toBe(500);
    expect(storedSpan([s], 999, { target: 300, longest: 100_000, range: 300 })).toBe(300);
  });

  it('stays within the most blocks a call may ask', () => {
    expect(storedSpan([stored(0, 9999, () => 0)], 9999, { target: 7000, longest: 2000, range: 500 })).toBe(2000);
  });

  it('gives no span for a top outside the window', () => {
    const s = stored(1000, 1999, () => 1, [{ fromBlock: 0, toBlock: 5000 }]);
    expect(storedSpan([s], 2000, { target: 50, ...WIDE })).toBeUndefined();
    expect(storedSpan([s], 999, { target: 50, ...WIDE })).toBeUndefined();
  });
});

describe('countedRows', () => {
  const window = stored(1000, 1999, (b) => (b % 2 ? 0 : 10));
  it('counts the rows stored over the blocks, of each contract', () => {
    expect(countedRows([window], 1010, 1019)).toBe(50);
    expect(countedRows([window], 1011, 1011)).toBe(0);
    expect(countedRows([window], 1000, 1999)).toBe(5000);
    expect(countedRows([window, stored(1000, 1999, () => 1)], 1010, 1019)).toBe(60);
  });

  it('counts nothing outside a window, or where a block was not read in full', () => {
    expect(countedRows([window], 990, 1019)).toBeUndefined();
    expect(countedRows([window], 1990, 2005)).toBeUndefined();
    expect(countedRows([stored(1000, 1999, () => 10, [{ fromBlock: 1015, toBlock: 1999 }])], 1010, 1019)).toBeUndefined();
    expect(countedRows([], 1010, 1019)).toBeUndefined();
  });
});

describe('rowsUpTo', () => {
  it('counts from the window’s first block up to the block', () => {
    const s = stored(1000, 1999, () => 10);
    expect(rowsUpTo(s, 1000)).toBe(10);
    expect(rowsUpTo(s, 1012)).toBe(130);
    expect(rowsUpTo(s, 5000)).toBe(10_000);
  });
});

describe('rowsProvedTooFew', () => {
  const tooMany: LogsRefusal = { code: -32005, message: 'query returned more than 500 results' };
  it('holds where the node refused as too many logs what it is known to answer in one call', () => {
    // a stated cap of 500, or an answer of 500 logs
    expect(rowsProvedTooFew(tooMany, 120, 500)).toBe(true);
    expect(rowsProvedTooFew(tooMany, 500, 500)).toBe(true);
  });

  it('shows nothing where the rows are more than that, or nothing is known the node answers', () => {
    expect(rowsProvedTooFew(tooMany, 501, 500)).toBe(false);
    // a cap the refusal states not, before any answer: the rows may just be more than it
    expect(rowsProvedTooFew(tooMany, 3500, 0)).toBe(false);
    expect(rowsProvedTooFew(tooMany, undefined, 500)).toBe(false);
  });

  it('shows nothing for refusals of blocks or of time', () => {
    expect(rowsProvedTooFew({ ...tooMany, blocks: true }, 10, 500)).toBe(false);
    expect(rowsProvedTooFew({ ...tooMany, maxRange: 10_000 }, 10, 500)).toBe(false);
    expect(rowsProvedTooFew({ ...tooMany, timedOut: true }, 10, 500)).toBe(false);
  });
});
