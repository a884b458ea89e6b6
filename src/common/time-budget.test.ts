import { describe, expect, it } from 'vitest';
import { createTimeBudget, NO_BUDGET, splitSpan, type BudgetInterval } from './time-budget.ts';

const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

describe('splitSpan', () => {
  it('gives each stretch to the first part under way, and the rest to other', () => {
    const intervals: BudgetInterval[] = [
      { part: 'api', start: 0, end: 10 },
      { part: 'parse', start: 8, end: 12 },
      { part: 'copy', start: 11, end: 15 },
    ];
    expect(splitSpan(intervals, 0, 20)).toEqual({ parse: 4, copy: 3, commit: 0, headers: 0, api: 8, other: 5 });
  });

  it('counts overlapping intervals of one part once, and adds up to the span', () => {
    const intervals: BudgetInterval[] = [
      { part: 'api', start: 0, end: 6 },
      { part: 'api', start: 2, end: 9 },
      { part: 'headers', start: 4, end: 5 },
      { part: 'commit', start: 9, end: 9 },
    ];
    const split = splitSpan(intervals, 0, 12);
    expect(split).toEqual({ parse: 0, copy: 0, commit: 0, headers: 1, api: 8, other: 3 });
    expect(sum(split)).toBe(12);
  });

  it('keeps to the span asked for', () => {
    const split = splitSpan(
      [
        { part: 'copy', start: -5, end: 5 },
        { part: 'parse', start: 8, end: 30 },
      ],
      0,
      10,
    );
    expect(split).toEqual({ parse: 2, copy: 5, commit: 0, headers: 0, api: 0, other: 3 });
  });

  it('goes back to a lower part when a higher one ends inside it', () => {
    const split = splitSpan(
      [
        { part: 'headers', start: 0, end: 10 },
        { part: 'commit', start: 2, end: 4 },
        { part: 'commit', start: 6, end: 7 },
      ],
      0,
      10,
    );
    expect(split).toEqual({ parse: 0, copy: 0, commit: 3, headers: 7, api: 0, other: 0 });
  });
});

describe('createTimeBudget', () => {
  it('times promises and synchronous work on its clock, from its start to the report', async () => {
    let t = 100;
    const budget = createTimeBudget(
      () => t,
      () => 1_700_000_000_000 + t,
    );
    await budget.time('api', async () => {
      t += 300;
    });
    budget.timeSync('parse', () => {
      t += 50;
    });
    await expect(
      budget.time('copy', async () => {
        t += 20;
        throw new Error('failed pages count too');
      }),
    ).rejects.toThrow('failed pages count too');
    t += 30;
    const report = budget.report();
    expect(report.seconds).toEqual({ parse: 0.05, copy: 0.02, commit: 0, headers: 0, api: 0.3, other: 0.03 });
    expect(report.endedAt - report.startedAt).toBe(400);
  });

  it('the budget of a run nobody asked about passes work through and has nothing to report', async () => {
    expect(await NO_BUDGET.time('api', async () => 7)).toBe(7);
    expect(NO_BUDGET.timeSync('parse', () => 8)).toBe(8);
    expect(() => NO_BUDGET.report()).toThrow('no time budget');
  });
});
