import { describe, expect, it } from 'vitest';
import { wallBudget } from './wall-budget.ts';

describe('wallBudget', () => {
  const report = { startedAt: 1_400, endedAt: 4_900, seconds: { parse: 1, copy: 2, commit: 0.2, headers: 0.1, api: 0.1, other: 0.1 } };

  it('puts start-up before the exporter parts and shutdown after, each with its share of the wall time', () => {
    const parts = wallBudget(1_000, 5_000, report);
    expect(parts.map((p) => p.part)).toEqual([
      'process start-up',
      'parsing and validating',
      'COPY / merge',
      'commits and ledgers',
      'header fetch and insert',
      'waiting on the API',
      'other (planning, locks, metadata)',
      'shutdown',
    ]);
    expect(parts[0]).toEqual({ part: 'process start-up', seconds: 0.4, share: 0.1 });
    expect(parts.at(-1)!.seconds).toBeCloseTo(0.1);
    expect(parts.reduce((s, p) => s + p.seconds, 0)).toBeCloseTo(4);
    expect(parts.reduce((s, p) => s + p.share, 0)).toBeCloseTo(1);
  });

  it('never counts negative start-up or shutdown when clocks disagree by a few milliseconds', () => {
    const parts = wallBudget(1_500, 4_800, report);
    expect(parts[0]!.seconds).toBe(0);
    expect(parts.at(-1)!.seconds).toBe(0);
  });
});
