import { describe, expect, it } from 'vitest';
import { parseProcStat } from './proc-stat.ts';

describe('parseProcStat', () => {
  it('reads the parent and the own and child CPU ticks', () => {
    const line = '4242 (node) S 17 4242 4242 0 -1 4194560 900 0 0 0 150 30 7 3 20 0 11 0 9999 1000000 5000';
    expect(parseProcStat(line)).toEqual({ ppid: 17, ownTicks: 180, childTicks: 10 });
  });

  it('counts fields from the last parenthesis, so a name with spaces and parentheses does not shift them', () => {
    const line = '77 (postgres: a (b) c) R 1 77 77 0 -1 0 0 0 0 0 5 6 1 2 20 0 1';
    expect(parseProcStat(line)).toEqual({ ppid: 1, ownTicks: 11, childTicks: 3 });
  });

  it('refuses a line that is not a stat line', () => {
    expect(() => parseProcStat('not a stat line')).toThrow(/unexpected \/proc stat line/);
  });
});
