import type { Rng } from './rng.ts';

/** The smallest and largest amounts, in whole tokens, as powers of ten: 0.01 and 1,000,000 tokens. */
const LOWEST_POWER = -2;
const HIGHEST_POWER = 6;
/** How many significant digits an amount has, drawn from this list: mostly a few (48,000 or 0.034), sometimes more (1,250.5). */
const SIGNIFICANT_DIGITS: readonly number[] = [1, 2, 2, 3, 3, 4, 5];

/**
 * A transfer value as a person would see it, as decimal text in the token's smallest unit: an amount from
 * 0.01 to 1,000,000 whole tokens, spread evenly over the orders of magnitude (log-uniform), with one to five
 * significant digits. A token with fewer than two decimals moves at least one of its smallest units. Exact:
 * only the significant digits pass through a JS number (at most 100,000); the scaling is bigint.
 *
 * @example realisticValue(rng, 6) // '1250500000' (1,250.5 tokens), '34000' (0.034), '48000000000' (48,000)
 */
export function realisticValue(rng: Rng, decimals: number): string {
  const lowest = Math.max(LOWEST_POWER, -decimals);
  const magnitude = lowest + rng.next() * (HIGHEST_POWER - lowest); // log10 of the amount in whole tokens
  const digits = SIGNIFICANT_DIGITS[rng.int(0, SIGNIFICANT_DIGITS.length - 1)]!;
  const leading = Math.floor(magnitude); // the power of ten of the leading digit
  // the significant digits as an integer, from 10^(digits−1) to 10^digits
  const significand = BigInt(Math.round(10 ** (magnitude - leading + digits - 1)));
  // in smallest units the amount is significand · 10^shift; a negative shift drops digits the token cannot hold
  const shift = leading - (digits - 1) + decimals;
  return (shift >= 0 ? significand * 10n ** BigInt(shift) : significand / 10n ** BigInt(-shift)).toString();
}
