import { describe, expect, it } from 'vitest';
import { realisticValue } from './realistic-amounts.ts';
import { createRng } from './rng.ts';

const draw = (decimals: number, count = 5000, seed = 7): bigint[] => {
  const rng = createRng(seed);
  return Array.from({ length: count }, () => BigInt(realisticValue(rng, decimals)));
};
const unit = (decimals: number) => 10n ** BigInt(decimals);
/** The value's digits without its trailing zeros. */
const significantDigits = (value: bigint) => value.toString().replace(/0+$/, '').length;

describe('realisticValue', () => {
  it.each([18, 8, 6, 2])('keeps %i-decimal amounts from 0.01 to 1,000,000 whole tokens', (decimals) => {
    const values = draw(decimals);
    const tooSmall = values.filter((v) => v * 100n < unit(decimals));
    const tooLarge = values.filter((v) => v > 1_000_000n * unit(decimals));
    expect({ tooSmall, tooLarge }).toEqual({ tooSmall: [], tooLarge: [] });
  });

  it('spreads amounts over every order of magnitude, about evenly', () => {
    const values = draw(6, 8000);
    const byPower = new Map<number, number>();
    for (const v of values) {
      const power = v.toString().length - 1 - 6; // the power of ten of the amount's leading digit, in tokens
      byPower.set(power, (byPower.get(power) ?? 0) + 1);
    }
    expect([...byPower.keys()].filter((power) => power < -2 || power > 6)).toEqual([]); // 6: just below 1,000,000, rounded up to it
    for (let power = -2; power <= 5; power++) expect(byPower.get(power)!).toBeGreaterThan(8000 / 8 / 2);
  });

  it('gives amounts a few significant digits, with whole and fractional tokens among them', () => {
    const values = draw(18);
    expect(values.filter((v) => significantDigits(v) > 5)).toEqual([]);
    expect(values.some((v) => significantDigits(v) === 1)).toBe(true);
    expect(values.some((v) => significantDigits(v) === 5)).toBe(true);
    expect(values.some((v) => v % unit(18) === 0n)).toBe(true);
    expect(values.some((v) => v > unit(18) && v % unit(18) !== 0n)).toBe(true);
    expect(values.some((v) => v < unit(18))).toBe(true);
  });

  it('moves at least one unit of a token without decimals, never a fraction', () => {
    const values = draw(0);
    expect(values.filter((v) => v < 1n || v > 1_000_000n)).toEqual([]);
    expect(values.filter((v) => v === 1n).length).toBeLessThan(values.length / 10);
  });

  it('is exact beyond 2^53: an 18-decimal amount keeps its digits in bigint', () => {
    const large = draw(18).filter((v) => v > 2n ** 53n);
    expect(large.length).toBeGreaterThan(1000);
    expect(large.every((v) => /^[1-9]\d{0,4}0+$/.test(v.toString()))).toBe(true);
  });

  it('gives the same values for the same seed', () => {
    expect(draw(6, 100, 3)).toEqual(draw(6, 100, 3));
    expect(draw(6, 100, 3)).not.toEqual(draw(6, 100, 4));
  });
});
