import { describe, expect, it } from 'vitest';
import { CHAIN_FINALITY, DEFAULT_FINALITY, defaultFinality, finalityDefaults } from './chain-defaults.ts';

describe('defaultFinality', () => {
  it('keeps 64 for Ethereum, its testnets and any chain it does not know', () => {
    expect(DEFAULT_FINALITY).toBe(64);
    for (const chain of [1, 11_155_111, 17_000, 560_048, 100, 43_114, 59_144, 999_999]) expect(defaultFinality(chain), String(chain)).toBe(64);
  });

  it('reads deeper on the rollups, Polygon PoS and BNB Smart Chain', () => {
    expect(defaultFinality(10)).toBe(900);
    expect(defaultFinality(8453)).toBe(900);
    expect(defaultFinality(42161)).toBe(7200);
    expect(defaultFinality(137)).toBe(512);
    expect(defaultFinality(56)).toBe(240);
  });
});

describe('CHAIN_FINALITY', () => {
  it('holds only depths a job may state, deeper than the default, each with a reason and a source', () => {
    expect(Object.keys(CHAIN_FINALITY).length).toBeGreaterThan(0);
    for (const [id, c] of Object.entries(CHAIN_FINALITY)) {
      expect(Number.isSafeInteger(Number(id)), id).toBe(true);
      expect(Number.isInteger(c.finality) && c.finality > DEFAULT_FINALITY && c.finality <= 10_000, id).toBe(true);
      expect(c.name, id).toBeTruthy();
      expect(c.reason, id).toBeTruthy();
      expect(c.source, id).toMatch(/^https:\/\//);
    }
  });
});

describe('finalityDefaults', () => {
  it('names the default and every known chain with its depth', () => {
    const text = finalityDefaults();
    expect(text.startsWith('64 for Ethereum (1)')).toBe(true);
    for (const [id, c] of Object.entries(CHAIN_FINALITY)) expect(text).toContain(`${c.finality} for ${c.name} (${id})`);
  });
});
