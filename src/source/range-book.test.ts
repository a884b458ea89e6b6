import { describe, expect, it } from 'vitest';
import { afterAnswer, afterRefusal } from './logs-range.ts';
import { parseLogsRefusal } from './provider-errors.ts';
import { createRangeBook, setLogsPerBlock } from './range-book.ts';

const A = '0xa';
const B = '0xb';
const C = '0xc';

describe('createRangeBook', () => {
  it('starts the first set of contracts at the learned range, and keeps each set’s own', () => {
    const book = createRangeBook({ learned: 800 });
    expect(book.of([A], 0).range).toBe(800);
    book.set([A], 0, { ...book.of([A], 0), range: 1200 });
    expect(book.of([A], 0).range).toBe(1200);
    // the same set, whatever the order
    book.set([B, A], 0, { ...book.of([A, B], 0), range: 300 });
    expect(book.of([A, B], 0).range).toBe(300);
    expect(book.of([A], 0).range).toBe(1200);
  });

  it('sizes a set met for the first time by its contracts’ logs per block lately', () => {
    const book = createRangeBook();
    book.set([A], 1000, afterAnswer(book.of([A], 1000), { fromBlock: 1, toBlock: 1000 }, 2000));
    book.answered([A, B], 1000, new Map([[A, 2000]]));
    // 2 logs a block of A, none of B: 7,000 logs fit in 3,500 blocks; but no call answered over more than 1,000 yet
    // (nor is the range of the last call over 2,000)
    expect(book.of([A, B], 0).range).toBe(2000);
    book.answered([A], 4000, new Map([[A, 8000]]));
    expect(book.of([A, B], 0).range).toBe(3500);
    book.answered([B], 500, new Map([[B, 2500]]));
    expect(book.of([A, B], 0).range).toBe(1000);
  });

  it('sizes a set with a contract no answer has told of yet as if it were as busy as the busiest told, never above the range it had', () => {
    const book = createRangeBook({ learned: 2000 });
    book.set([A], 10_000, afterAnswer(book.of([A], 10_000), { fromBlock: 8001, toBlock: 10_000 }, 20_000));
    book.answered([A], 2000, new Map([[A, 20_000]]));
    expect([book.told(A), book.told(B)]).toEqual([true, false]);
    // A: 10 logs a block, its range 700 blocks. B's first call is still out: counted at 10 too, 7,000 logs in 350 blocks
    expect(book.of([A], 7999).range).toBe(700);
    expect(book.of([A, B], 7999).range).toBe(350);
    // a quiet A: the guessed set is sized at 0.2 logs a block, within the longest span that answered
    const quiet = createRangeBook({ learned: 2000 });
    quiet.set([A], 10_000, afterAnswer(quiet.of([A], 10_000), { fromBlock: 8001, toBlock: 10_000 }, 200));
    quiet.answered([A], 2000, new Map([[A, 200]]));
    expect(quiet.of([A, B], 7999).range).toBe(2000);
    expect(quiet.of([A, C], 7999).seededDensity).toBe(0.2);
    // a guess gives a set no more than the range it would have had without it: [A, C] refused down to 500 blocks far
    // above, C never answered since
    quiet.set([A, C], 50_000, { ...quiet.of([A, C], 50_000), range: 500 });
    expect(quiet.of([A, C], 7999).range).toBe(500);
  });

  it('counts a contract no answer has told of as busy as the busiest told, and says so', () => {
    expect(setLogsPerBlock([2.5, 4, undefined])).toEqual({ perBlock: 10.5, guessed: true });
    expect(setLogsPerBlock([2.5, 4])).toEqual({ perBlock: 6.5, guessed: false });
    expect(setLogsPerBlock([undefined, undefined])).toBeUndefined();
    expect(setLogsPerBlock([0, undefined])).toEqual({ perBlock: 0, guessed: true });
  });

  it('sizes a set again by its contracts’ logs per block when it is called far from where it was last', () => {
    const book = createRangeBook();
    book.set([A, B], 100_000, { ...book.of([A, B], 100_000), range: 500 });
    book.answered(
      [A, B],
      500,
      new Map([
        [A, 500],
        [B, 500],
      ]),
    );
    book.answered([A], 5000, new Map([[A, 5000]]));
    book.answered([B], 5000, new Map([[B, 5000]]));
    expect(book.of([A, B], 99_200).range).toBe(500);
    // 2 logs a block lately: 3,500 blocks hold 7,000 logs, as far from the old range as it likes
    expect(book.of([A, B], 90_000).range).toBe(3500);
  });

  it('keeps every set, new or sized again far away, below a block limit one set met, starting at the longest span that answered', () => {
    const tooWide = { code: -32600, message: 'block range is too wide' };
    const book = createRangeBook({ learned: 400 });
    // A answers 400 blocks twice with few logs, grows to 800, and is refused there: a block limit
    let a = book.of([A], 100_000);
    for (const top of [100_000, 99_600]) {
      a = afterAnswer(a, { fromBlock: top - a.range + 1, toBlock: top }, 40);
      book.answered([A], 400, new Map([[A, 40]]));
      book.set([A], top, a);
    }
    expect(a.range).toBe(800);
    const refused = afterRefusal(a, { fromBlock: 98_401, toBlock: 99_200, contracts: [A] }, parseLogsRefusal(tooWide)!);
    if (refused.action !== 'retry') throw new Error(refused.action);
    expect(refused).toMatchObject({ because: 'block-limit', state: { range: 400, rangeCeiling: 800 } });
    book.set([A], 99_200, refused.state);
    // B, never called, however sparse its logs: at the longest span that answered, under the ceiling
    book.answered([B], 400, new Map([[B, 0]]));
    expect(book.of([B], 50_000)).toMatchObject({ range: 400, rangeCeiling: 800 });
    expect(book.of([A, B], 50_000)).toMatchObject({ range: 400, rangeCeiling: 800 });
    // A itself, sized again far from where it was
    expect(book.of([A], 10_000)).toMatchObject({ range: 400, rangeCeiling: 800 });
  });

  it('asks a block limit again every 100 answers, whatever refusals come between: refused, it holds; answered over it, it is gone', () => {
    const book = createRangeBook({ learned: 400 });
    const tooWide = parseLogsRefusal({ code: -32600, message: 'block range is too wide' })!;
    const capped = parseLogsRefusal({ code: -32602, message: 'query exceeds max results 10000' })!;
    let a = book.of([A], 100_000);
    a = afterAnswer(a, { fromBlock: 99_601, toBlock: 100_000 }, 40);
    book.answered([A], 400, new Map([[A, 40]]));
    book.set([A], 100_000, a);
    const met = afterRefusal({ ...a, range: 800 }, { fromBlock: 98_801, toBlock: 99_600, contracts: [A] }, tooWide);
    if (met.action !== 'retry') throw new Error(met.action);
    expect(book.blockLimit()).toBeUndefined();
    book.set([A], 99_600, met.state);
    expect(book.blockLimit()).toEqual({ blocks: 800, answers: 0 });
    // B, busy (10 logs a block: sized to 700 blocks, under the limit): refused for its logs every 30 answers
    const busy = (answers: number) => {
      for (let i = 1; i <= answers; i++) {
        let b = book.of([B], 50_000);
        expect(b.rangeCeiling, `answer ${i}`).toBe(800);
        if (i % 30 === 0) {
          const d = afterRefusal(b, { fromBlock: 50_001 - b.range, toBlock: 50_000, contracts: [B] }, capped);
          if (d.action === 'retry') book.set([B], 50_000, d.state);
          b = book.of([B], 50_000);
        }
        b = afterAnswer(b, { fromBlock: 50_001 - b.range, toBlock: 50_000 }, b.range * 10);
        book.answered([B], b.range, new Map([[B, b.range * 10]]));
        book.set([B], 50_000, b);
      }
    };
    busy(99);
    expect(book.of([A], 99_600)).toMatchObject({ range: 400, rangeCeiling: 800 });
    busy(1);
    // a look before the call (how far behind others are) does not use up the asking again
    expect(book.peek([A], 99_600)).toMatchObject({ range: 400, rangeCeiling: 800 });
    expect(book.peek([B], 50_000)).toMatchObject({ rangeCeiling: 800 });
    // A asks the 800 blocks again, and is refused: the limit holds for 100 answers more
    const probe = book.of([A], 99_600);
    expect(probe).toMatchObject({ range: 800, rangeCeiling: undefined });
    expect(book.of([A], 99_600)).toMatchObject({ range: 400, rangeCeiling: 800 });
    const again = afterRefusal(probe, { fromBlock: 98_801, toBlock: 99_600, contracts: [A] }, tooWide);
    if (again.action !== 'retry') throw new Error(again.action);
    expect(again).toMatchObject({ because: 'block-limit', state: { range: 700, rangeCeiling: 800 } });
    book.set([A], 99_600, again.state);
    busy(100);
    // asked again, and answered over 800 blocks: the limit is gone
    const answered = book.of([A], 99_600);
    expect(answered.range).toBe(800);
    book.answered([A], 800, new Map([[A, 80]]));
    book.set([A], 99_600, afterAnswer(answered, { fromBlock: 98_801, toBlock: 99_600 }, 80));
    expect(book.of([B], 50_000).rangeCeiling).toBeUndefined();
    expect(book.blockLimit()).toBe('gone');
  });

  it('starts under a block limit an earlier run kept, at the range that answered then, asks it again at 100 answers counted on from that run, and says when it is gone', () => {
    expect(createRangeBook({ learned: 700 }).blockLimit()).toBeUndefined();
    // the job asks 2,000 blocks; the last run met a limit at 800 blocks, 96 answers ago, and answered over 700
    const book = createRangeBook({ learned: 2000, blockLimit: { blocks: 800, answers: 96 }, answeredBefore: 700 });
    // every set, the first one too, starts at the span that answered, under it
    expect(book.of([A], 100_000)).toMatchObject({ range: 700, rangeCeiling: 800 });
    expect(book.peek([A, B], 100_000)).toMatchObject({ range: 700, rangeCeiling: 800 });
    expect(book.blockLimit()).toEqual({ blocks: 800, answers: 96 });
    let top = 100_000;
    const answer = () => {
      const state = afterAnswer(book.of([A], top), { fromBlock: top - 699, toBlock: top }, 70);
      book.answered([A], 700, new Map([[A, 70]]));
      book.set([A], top, state);
      top -= 700;
    };
    for (let i = 0; i < 4; i++) answer();
    expect(book.blockLimit()).toEqual({ blocks: 800, answers: 100 });
    // the 100th answer since it was met: a look asks nothing, the next call asks the 800 blocks again
    expect(book.peek([A], top)).toMatchObject({ rangeCeiling: 800 });
    expect(book.peek([A], top).range).toBeLessThan(800);
    expect(book.of([A], top)).toMatchObject({ range: 800, rangeCeiling: undefined });
    // answered over it: it is gone, and the next run is told so
    book.answered([A], 800, new Map([[A, 80]]));
    expect(book.blockLimit()).toBe('gone');
    expect(book.of([A], top - 800).rangeCeiling).toBeUndefined();
  });

  it('leaves asking a block limit again to the next call when the call that was to ask it is cut short under it', () => {
    const book = createRangeBook({ learned: 700, blockLimit: { blocks: 800, answers: 150 }, answeredBefore: 700 });
    const first = book.of([A], 100_000);
    book.asked([A], 100_000, 700);
    book.answered([A], 700, new Map([[A, 70]]));
    book.set([A], 100_000, afterAnswer(first, { fromBlock: 99_301, toBlock: 100_000 }, 70));
    // due: this call is to ask 800 blocks, but only 300 are left of its chunk
    expect(book.of([A], 99_300)).toMatchObject({ range: 800, rangeCeiling: undefined });
    // not this call's (another top): nothing given back
    expect(book.asked([A], 99_000, 300)).toBe(false);
    expect(book.asked([A], 99_300, 300)).toBe(true);
    // the call is sized as any other, under the limit
    expect(book.peek([A], 99_300)).toMatchObject({ rangeCeiling: 800 });
    expect(book.peek([A], 99_300).range).toBeLessThan(800);
    book.answered([A], 300, new Map([[A, 30]]));
    expect(book.blockLimit()).toEqual({ blocks: 800, answers: 101 });
    // the next call asks it, over the whole span; asked, the count starts again
    expect(book.of([A], 120_000)).toMatchObject({ range: 800, rangeCeiling: undefined });
    expect(book.asked([A], 120_000, 800)).toBe(false);
    expect(book.blockLimit()).toEqual({ blocks: 800, answers: 0 });
    expect(book.of([A], 120_000)).toMatchObject({ rangeCeiling: 800 });
    // another set's call cut short does not give back this one's asking
    const other = createRangeBook({ learned: 700, blockLimit: { blocks: 800, answers: 150 }, answeredBefore: 700 });
    other.answered([A], 700, new Map([[A, 70]]));
    other.set([A], 100_000, afterAnswer(other.of([A], 100_000), { fromBlock: 99_301, toBlock: 100_000 }, 70));
    expect(other.of([A], 99_300).range).toBe(800);
    expect(other.asked([B], 99_300, 300)).toBe(false);
    expect(other.asked([A], 99_300, 800)).toBe(false);
    expect(other.blockLimit()).toEqual({ blocks: 800, answers: 0 });
  });

  it('does not ask a kept block limit again before a set knows its logs per block: a refusal then would read as too many logs', () => {
    const book = createRangeBook({ learned: 700, blockLimit: { blocks: 800, answers: 150 }, answeredBefore: 700 });
    const first = book.of([A], 100_000);
    expect(first).toMatchObject({ range: 700, rangeCeiling: 800 });
    book.answered([A], 700, new Map([[A, 70]]));
    book.set([A], 100_000, afterAnswer(first, { fromBlock: 99_301, toBlock: 100_000 }, 70));
    expect(book.of([A], 99_300)).toMatchObject({ range: 800, rangeCeiling: undefined });
  });

  it('remembers for the next run the least range learned by the sets with a quarter of the most answers, not a set met for a few calls', () => {
    const book = createRangeBook();
    const answer = (contracts: string[], blocks: number, logs: number) => {
      const state = book.of(contracts, 100_000);
      book.set(contracts, 100_000, afterAnswer(state, { fromBlock: 100_001 - blocks, toBlock: 100_000 }, logs));
      book.answered(contracts, blocks, new Map(contracts.map((c) => [c, logs / contracts.length])));
    };
    // A and B together: 2,000 blocks of 2,000 logs, ten times; B alone, twice, with logs enough to learn 700 blocks
    for (let i = 0; i < 10; i++) answer([A, B], 2000, 2000);
    answer([B], 2000, 20_000);
    answer([B], 700, 7000);
    expect(book.learned()).toBe(2000);
    // C, busy, over fewer calls than the quiet pair but more than a quarter of theirs: its range is the one kept
    for (let i = 0; i < 3; i++) answer([C], 700, 7000);
    expect(book.learned()).toBe(700);
  });

  it('remembers for the next run the least range of the sets tied on answers', () => {
    const book = createRangeBook();
    expect(book.learned()).toBeUndefined();
    book.set([A], 2000, afterAnswer(book.of([A], 2000), { fromBlock: 1, toBlock: 2000 }, 1000));
    book.set([A, B], 2000, afterAnswer(book.of([A, B], 2000), { fromBlock: 1, toBlock: 2000 }, 10_000));
    expect(book.learned()).toBe(1400);
  });

  it('does not lower the range remembered for a set that only answered the last blocks of a chunk', () => {
    const book = createRangeBook({ learned: 1400 });
    book.set([A], 2000, afterAnswer(book.of([A], 2000), { fromBlock: 1, toBlock: 1400 }, 1000));
    // a resumed chunk: its checkpoint leaves 4 blocks, read by a set of contracts of their own
    const tail = afterAnswer(book.of([A, B], 90_000), { fromBlock: 89_997, toBlock: 90_000 }, 3);
    book.set([A, B], 90_000, tail);
    expect(tail.largest).toBe(4);
    expect(book.learned()).toBe(1400);
  });
});
