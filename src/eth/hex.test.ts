import { describe, expect, it } from 'vitest';
import { isHexData, isHexText } from './hex.ts';

describe('isHexText', () => {
  // every character that could stand in a digit's place, in every position, against the expression it replaced
  const chars = [...Array.from({ length: 256 }, (_, c) => String.fromCharCode(c)), '\u2000', '\uff10'];
  const agrees = (digits: number, options: { lower?: boolean; zeros?: number }, expression: RegExp) => {
    const valid = `0x${'0'.repeat(options.zeros ?? 0)}${'a'.repeat(digits - (options.zeros ?? 0))}`;
    for (let at = 0; at < valid.length; at++) {
      for (const c of chars) {
        const s = valid.slice(0, at) + c + valid.slice(at + 1);
        expect(isHexText(s, digits, options), JSON.stringify(s)).toBe(expression.test(s));
      }
    }
  };

  it('lower case: agrees with /^0x[0-9a-f]{N}$/ on every character up to U+00FF and two beyond, in every position', () => {
    for (const digits of [1, 40, 64]) agrees(digits, { lower: true }, new RegExp(`^0x[0-9a-f]{${digits}}$`));
  });

  it('either case: agrees with /^0x[0-9a-fA-F]{N}$/ the same way', () => {
    for (const digits of [1, 40, 64]) agrees(digits, {}, new RegExp(`^0x[0-9a-fA-F]{${digits}}$`));
  });

  it('an address topic: agrees with /^0x0{24}[0-9a-fA-F]{40}$/ the same way', () => {
    agrees(64, { zeros: 24 }, /^0x0{24}[0-9a-fA-F]{40}$/);
  });

  it('refuses a wrong length, a missing 0x, and upper case where lower is asked for', () => {
    expect(isHexText(`0x${'ab'.repeat(20)}`, 40, { lower: true })).toBe(true);
    expect(isHexText(`0x${'AB'.repeat(20)}`, 40)).toBe(true);
    expect(isHexText(`0x${'AB'.repeat(20)}`, 40, { lower: true })).toBe(false);
    expect(isHexText(`0x${'ab'.repeat(20)}0`, 40)).toBe(false);
    expect(isHexText(`0x${'ab'.repeat(19)}a`, 40)).toBe(false);
    expect(isHexText(`00${'ab'.repeat(20)}`, 40)).toBe(false);
    expect(isHexText(`0X${'ab'.repeat(20)}`, 40)).toBe(false);
    expect(isHexText('0x', 0)).toBe(true);
  });
});

describe('isHexData', () => {
  it('agrees with /^0x(?:[0-9a-fA-F]{2})*$/ on every character up to U+00FF and two beyond, in every position, and on every length up to 9', () => {
    const expression = /^0x(?:[0-9a-fA-F]{2})*$/;
    const chars = [...Array.from({ length: 256 }, (_, c) => String.fromCharCode(c)), '\u2000', '\uff10'];
    for (const valid of ['0x', '0xab', '0x00fF', `0x${'a1'.repeat(32)}`]) {
      for (let at = 0; at < valid.length; at++) {
        for (const c of chars) {
          const s = valid.slice(0, at) + c + valid.slice(at + 1);
          expect(isHexData(s), JSON.stringify(s)).toBe(expression.test(s));
        }
      }
    }
    for (let n = 0; n <= 9; n++) {
      for (const s of ['a'.repeat(n), `0x${'a'.repeat(n)}`]) expect(isHexData(s), JSON.stringify(s)).toBe(expression.test(s));
    }
  });

  it('with a size, takes exactly that many bytes', () => {
    expect(isHexData(`0x${'ab'.repeat(32)}`, 32)).toBe(true);
    expect(isHexData(`0x${'ab'.repeat(31)}`, 32)).toBe(false);
    expect(isHexData(`0x${'ab'.repeat(33)}`, 32)).toBe(false);
    expect(isHexData('0x', 0)).toBe(true);
  });
});
