import { describe, expect, it } from 'vitest';
import { checkUint256Text, MAX_UINT256 } from './validate.ts';

describe('checkUint256Text', () => {
  it.each([
    ['zero', '0'],
    ['77 nines, below 10^77 and so below 2^256', '9'.repeat(77)],
    ['2^256 − 1, the largest uint256 (78 digits)', MAX_UINT256.toString()],
    ['the smallest 78-digit number', `1${'0'.repeat(77)}`],
  ])('takes %s', (_, value) => {
    expect(checkUint256Text(value)).toBeUndefined();
  });

  it.each([
    ['2^256', (MAX_UINT256 + 1n).toString()],
    ['78 nines', '9'.repeat(78)],
    ['79 digits', `1${'0'.repeat(78)}`],
    ['a leading zero', '01'],
    ['a sign', '-1'],
    ['a number, not text', 1],
  ])('refuses %s, saying what it expected', (_, value) => {
    expect(checkUint256Text(value)).toMatch(/^expected decimal integer text from 0 to 2\^256-1, got /);
  });
});
