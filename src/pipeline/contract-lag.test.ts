import { describe, expect, it } from 'vitest';
import { contractLag } from './contract-lag.ts';

describe('contractLag', () => {
  it('counts the blocks from the last one covered to the head for a contract that follows the head', () => {
    expect(contractLag(1_000, undefined, 990)).toBe(10);
    expect(contractLag(1_000, undefined, 1_000)).toBe(0);
  });

  it('counts a bounded contract only up to its toBlock, so one read to its end lags 0 as the head moves on', () => {
    expect(contractLag(1_000, 900, 900)).toBe(0);
    expect(contractLag(5_000, 900, 900)).toBe(0);
    expect(contractLag(1_000, 900, 850)).toBe(50);
  });

  it('counts to the head when a bounded contract ends beyond it', () => {
    expect(contractLag(1_000, 2_000, 990)).toBe(10);
  });

  it('reports 0 for a contract with nothing covered yet, and never less than 0', () => {
    expect(contractLag(1_000, undefined, undefined)).toBe(0);
    expect(contractLag(1_000, undefined, 1_010)).toBe(0);
  });
});
