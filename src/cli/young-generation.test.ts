import { describe, expect, it } from 'vitest';
import { growthFactor, V8_GROWTH_FACTOR } from './young-generation.ts';

const MiB = 2 ** 20;

describe('growthFactor', () => {
  it("lets the young generation grow by V8's factor while one more growth stays within the cap", () => {
    expect(growthFactor(1 * MiB, 16 * MiB)).toBe(V8_GROWTH_FACTOR);
    expect(growthFactor(8 * MiB, 16 * MiB)).toBe(V8_GROWTH_FACTOR);
  });

  it('stops it at the cap, and above it when V8 grew it past', () => {
    expect(growthFactor(16 * MiB, 16 * MiB)).toBe(1);
    expect(growthFactor(32 * MiB, 16 * MiB)).toBe(1);
  });

  it('stops it short of a cap that is not a doubling of its size, rather than pass it', () => {
    expect(growthFactor(8 * MiB, 12 * MiB)).toBe(1);
    expect(growthFactor(4 * MiB, 12 * MiB)).toBe(V8_GROWTH_FACTOR);
  });

  it('lets it grow back after V8 shrank it', () => {
    expect(growthFactor(2 * MiB, 16 * MiB)).toBe(V8_GROWTH_FACTOR);
  });
});
