import { parseCronItem } from 'graphile-worker';
import { describe, expect, it } from 'vitest';
import { cronProblem } from './cron.ts';

const accepted = (match: string) => {
  try {
    parseCronItem({ task: 't', match, identifier: 'x' });
    return true;
  } catch {
    return false;
  }
};

describe('cronProblem', () => {
  it('accepts exactly the schedules graphile-worker’s public parseCronItem accepts (the module it loads is that parser)', () => {
    const cases = [
      '0 2 * * *',
      '*/15 * * * *',
      '0 0-6 1,15 * 1-5',
      ' 30  4 * * 0 ',
      '0 2 * * 7',
      '0 24 * * *',
      '60 * * * *',
      '0 2 * *',
      '0 2 * * * *',
      '0 2 0 * *',
      '0 2 * 13 *',
      '5-5 * * * *',
      '6-2 * * * *',
      '*/0 * * * *',
      '0 2 * * MON',
      '@daily',
      '0 2 ? * *',
      '1/5 * * * *',
      '',
    ];
    for (const c of cases) expect([c, cronProblem(c) === undefined]).toEqual([c, accepted(c.trim())]);
  });

  it('names the field and the value that is wrong', () => {
    expect(cronProblem('0 24 * * *')).toBe('hour: 24 is out of range 0–23');
    expect(cronProblem('0 2 * * MON')).toBe('day of week: "MON" is not a number, a range a-b, * or */n');
    expect(cronProblem('0 2 * *')).toBe('4 field(s) where 5 were expected');
    expect(cronProblem('6-2 * * * *')).toBe('minute: range 6-2 must go upwards');
  });

  it('finds the wrong part of a list, and says what each kind of mistake is', () => {
    expect(cronProblem('0 2 * * 1,MON')).toBe('day of week: "MON" is not a number, a range a-b, * or */n');
    expect(cronProblem('1,,2 * * * *')).toBe('minute: "" is not a number, a range a-b, * or */n');
    expect(cronProblem('1/5 * * * *')).toBe('minute: "1/5" is not a number, a range a-b, * or */n');
    expect(cronProblem('*/0 * * * *')).toBe('minute: step */0 must be at least 1');
    expect(cronProblem('0 2 0 * *')).toBe('day of month: 0 is out of range 1–31');
    expect(cronProblem('0 2 * 1,13 *')).toBe('month: 13 is out of range 1–12');
    expect(cronProblem('0 2 * * 8')).toBe('day of week: 8 is out of range 0–6');
    expect(cronProblem('  ')).toBe('no field(s) where 5 were expected');
  });
});
