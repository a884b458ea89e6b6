import { describe, expect, it } from 'vitest';
import { checkUint256Text, isLowerHex, MAX_UINT256 } from './validate.ts';

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

describe('isLowerHex', () => {
  // what the regular expression it replaced says, for every character that could stand in a digit's place
  const expression = (digits: number) => new RegExp(`^0x[0-9a-f]{${digits}}$`);

  it('agrees with /^0x[0-9a-f]{N}$/ on every character up to U+00FF and two beyond, in every position', () => {
    const chars = [...Array.from({ length: 256 }, (_, c) => String.fromCharCode(c)), '\u2000', '\uff10'];
    for (const digits of [1, 40, 64]) {
      const valid = `0x${'a'.repeat(digits)}`;
      for (let at = 0; at < valid.length; at++) {
        for (const c of chars) {
          const s = valid.slice(0, at) + c + valid.slice(at + 1);
          expect(isLowerHex(s, digits), JSON.stringify(s)).toBe(expression(digits).test(s));
        }
      }
    }
  });

  it('refuses a wrong length, a missing 0x and upper case', () => {
    expect(isLowerHex(`0x${'ab'.repeat(20)}`, 40)).toBe(true);
    expect(isLowerHex(`0x${'ab'.repeat(20)}0`, 40)).toBe(false);
    expect(isLowerHex(`0x${'ab'.repeat(19)}a`, 40)).toBe(false);
    expect(isLowerHex(`00${'ab'.repeat(20)}`, 40)).toBe(false);
    expect(isLowerHex(`0X${'ab'.repeat(20)}`, 40)).toBe(false);
    expect(isLowerHex(`0x${'AB'.repeat(20)}`, 40)).toBe(false);
    expect(isLowerHex('0x', 0)).toBe(true);
  });
});
