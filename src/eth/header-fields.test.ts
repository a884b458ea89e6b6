import { describe, expect, it } from 'vitest';
import { CONSENSUS_FIELDS, FIXED_BYTES, fieldExpectation, isFieldHex } from './header-fields.ts';

describe('isFieldHex', () => {
  it('takes data of exactly the size of its kind', () => {
    for (const [kind, size] of Object.entries(FIXED_BYTES) as [keyof typeof FIXED_BYTES, number][]) {
      expect(isFieldHex(kind, `0x${'aB'.repeat(size)}`), kind).toBe(true);
      expect(isFieldHex(kind, `0x${'ab'.repeat(size - 1)}`), `${kind} one byte short`).toBe(false);
      expect(isFieldHex(kind, `0x${'ab'.repeat(size + 1)}`), `${kind} one byte long`).toBe(false);
    }
  });

  it('takes bytes of any even length, and only minimal quantities', () => {
    expect(['0x', '0x00', '0xabcd'].map((v) => isFieldHex('bytes', v))).toEqual([true, true, true]);
    expect(['0x0', '0xg0', 'ab'].map((v) => isFieldHex('bytes', v))).toEqual([false, false, false]);
    expect(['0x0', '0x1', '0xABC'].map((v) => isFieldHex('quantity', v))).toEqual([true, true, true]);
    expect(['0x', '0x00', '0x01', '1'].map((v) => isFieldHex('quantity', v))).toEqual([false, false, false, false]);
  });

  it('refuses a value that is not text', () => {
    for (const value of [null, undefined, 7, 7n, ['0x00']]) expect(isFieldHex('bytes', value)).toBe(false);
  });
});

describe('fieldExpectation', () => {
  it('says the size of fixed-size kinds, and what the others must be', () => {
    expect(fieldExpectation('hash')).toBe('32 bytes of 0x hex');
    expect(fieldExpectation('bloom')).toBe('256 bytes of 0x hex');
    expect(fieldExpectation('bytes')).toBe('0x hex bytes');
    expect(fieldExpectation('quantity')).toBe('a minimal 0x hex quantity');
  });

  it('has a size for every consensus field of a fixed-size kind', () => {
    for (const { key, kind } of CONSENSUS_FIELDS) {
      if (kind !== 'bytes' && kind !== 'quantity') expect(FIXED_BYTES[kind], key).toBeGreaterThan(0);
    }
  });
});
