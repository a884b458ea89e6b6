import { keccak_256 } from '@noble/hashes/sha3.js';
import { describe, expect, it } from 'vitest';
import { keccak256 } from './keccak.ts';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('keccak256', () => {
  it('hashes nothing to the known empty digest', () => {
    expect(hex(keccak256(new Uint8Array(0)))).toBe('c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
  });

  it('agrees with @noble/hashes on inputs of every length around the rate, one after another', () => {
    // 136 bytes is keccak256's block: lengths on both sides of one and two blocks, and addresses and topics between
    for (const length of [1, 20, 32, 135, 136, 137, 271, 272, 273, 600]) {
      const data = Uint8Array.from({ length }, (_, i) => (i * 31 + length) & 255);
      expect(hex(keccak256(data)), `length ${length}`).toBe(hex(keccak_256(data)));
    }
  });

  it('gives each call its own digest: one kept is not overwritten by the next', () => {
    const first = keccak256(Uint8Array.of(1));
    const second = keccak256(Uint8Array.of(2));
    expect(hex(first)).toBe(hex(keccak_256(Uint8Array.of(1))));
    expect(hex(second)).not.toBe(hex(first));
  });
});
