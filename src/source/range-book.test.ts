import { describe, expect, it } from 'vitest';
import { afterAnswer } from './logs-range.ts';
import { createRangeBook } from './range-book.ts';

const A = '0xa';
const B = '0xb';

describe('createRangeBook', () => {
  it('starts the first set of contracts at the learned range, and keeps each set’s own', () => {
    const book = createRangeBook({ learned: 800 });
    expect(book.of([A]).range).toBe(800);
    book.set([A], { ...book.of([A]), range: 1200 });
    expect(book.of([A]).range).toBe(1200);
    // the same set, whatever the order
    book.set([B, A], { ...book.of([A, B]), range: 300 });
    expect(book.of([A, B]).range).toBe(300);
    expect(book.of([A]).range).toBe(1200);
  });

  it('sizes a set met for the first time by its contracts’ logs per block lately', () => {
    const book = createRangeBook();
    book.set([A], afterAnswer(book.of([A]), { fromBlock: 1, toBlock: 1000 }, 2000));
    book.answered([A, B], 1000, new Map([[A, 2000]]));
    // 2 logs a block of A, none of B: 7,500 logs fit in 3,750 blocks
    expect(book.of([A, B]).range).toBe(3750);
    book.answered([B], 500, new Map([[B, 2500]]));
    expect(book.of([A, B]).range).toBe(1071);
  });

  it('remembers for the next run the least range any set learned', () => {
    const book = createRangeBook();
    expect(book.learned()).toBeUndefined();
    book.set([A], afterAnswer(book.of([A]), { fromBlock: 1, toBlock: 2000 }, 1000));
    book.set([A, B], afterAnswer(book.of([A, B]), { fromBlock: 1, toBlock: 2000 }, 10_000));
    expect(book.learned()).toBe(1500);
  });
});
