import { describe, expect, it } from 'vitest';
import { printable, printableLine } from './printable.ts';

describe('printable', () => {
  it('escapes escape sequences, the bell and C1 controls, keeping other text', () => {
    expect(printable('\u001b[31mRED\u001b[0m\u0007')).toBe('\\u001b[31mRED\\u001b[0m\\u0007');
    expect(printable('a\u009bb\u007fc')).toBe('a\\u009bb\\u007fc');
    expect(printable('Ether ✓ 😀')).toBe('Ether ✓ 😀');
  });

  it('escapes newlines and tabs in a one-line value, and keeps them in a message of lines', () => {
    expect(printable('US\nDT\t')).toBe('US\\u000aDT\\u0009');
    expect(printable('line one\n\tline two\u001b]0;title\u0007', { lines: true })).toBe('line one\n\tline two\\u001b]0;title\\u0007');
  });

  it('writes a message of several lines on one line, each break a space, other controls escaped', () => {
    expect(printableLine('Bad page (1 problem):\n  contract 0xab: bad address\r\n\tnext\u001b[2J')).toBe('Bad page (1 problem): contract 0xab: bad address next\\u001b[2J');
  });
});
