import { keccak_256 } from '@noble/hashes/sha3.js';
import { describe, expect, it } from 'vitest';
import { keccak256 } from './keccak256.ts';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

/** Deterministic bytes (no randomness in tests): a xorshift stream from the length. */
function bytesOf(length: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = length * 2654435761 + 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x;
  }
  return out;
}

describe('keccak256', () => {
  it('hashes the empty string and "abc" to the published Keccak-256 values', () => {
    expect(hex(keccak256(new Uint8Array(0)))).toBe('c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
    expect(hex(keccak256(new TextEncoder().encode('abc')))).toBe('4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45');
  });

  it('equals @noble/hashes keccak_256 on every length from 0 to 1,200 bytes (every padding case, up to 9 blocks)', () => {
    for (let length = 0; length <= 1200; length++) {
      const data = bytesOf(length);
      expect(hex(keccak256(data)), `length ${length}`).toBe(hex(keccak_256(data)));
    }
    const ones = new Uint8Array(272).fill(0xff);
    expect(hex(keccak256(ones))).toBe(hex(keccak_256(ones)));
  });

  it('reads a view at an offset of its buffer', () => {
    const data = bytesOf(300);
    expect(hex(keccak256(data.subarray(7, 250)))).toBe(hex(keccak_256(data.slice(7, 250))));
  });
});
