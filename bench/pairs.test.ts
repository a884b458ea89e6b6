import { describe, expect, it } from 'vitest';
import { medianPair, pairRatiosText, pairsText, ratioText } from './pairs.ts';

describe('medianPair', () => {
  it('takes the pair with the middle ratio of three, whatever order they ran in', () => {
    const pairs = [
      { ratio: 0.98, id: 'a' },
      { ratio: 0.7, id: 'b' },
      { ratio: 0.95, id: 'c' },
    ];
    expect(medianPair(pairs).id).toBe('c');
    expect(medianPair([...pairs].reverse()).id).toBe('c');
  });

  it('takes the lower middle of an even number, and the one of one', () => {
    expect(medianPair([{ ratio: 0.9 }, { ratio: 0.7 }]).ratio).toBe(0.7);
    expect(medianPair([{ ratio: 0.81 }, { ratio: 0.79 }, { ratio: 0.9 }, { ratio: 0.6 }]).ratio).toBe(0.79);
    expect(medianPair([{ ratio: 1.2 }]).ratio).toBe(1.2);
  });

  it('refuses no pairs at all, and a ratio that is no number', () => {
    expect(() => medianPair([])).toThrow(/no pairs/);
    expect(() => medianPair([{ ratio: 0.9 }, { ratio: Number.NaN }, { ratio: 0.7 }])).toThrow(/ratio is NaN/);
  });
});

describe('pairsText', () => {
  it('lists every pair in the order it ran, and says nothing of a single one', () => {
    expect(
      pairsText(
        [
          { ratio: 0.98, loadSeconds: 18.94, copySeconds: 18.6, peakRssMb: 187.4 },
          { ratio: 0.704, loadSeconds: 20.6, copySeconds: 14.3, peakRssMb: 172 },
        ],
        0.8,
      ),
    ).toBe('lower middle of 2 pairs, in order: 0.98 (18.9 s vs 18.6 s; 187 MB), 0.70 (20.6 s vs 14.3 s; 172 MB)');
    expect(
      pairsText(
        [0.9, 0.7998, 0.85].map((ratio) => ({ ratio, loadSeconds: 2, copySeconds: 2 * ratio, peakRssMb: 150 })),
        0.8,
      ),
    ).toBe('median of 3 pairs, in order: 0.90 (2.0 s vs 1.8 s; 150 MB), 0.7998 (2.0 s vs 1.6 s; 150 MB), 0.85 (2.0 s vs 1.7 s; 150 MB)');
    expect(pairsText([{ ratio: 0.9, loadSeconds: 2, copySeconds: 1.8, peakRssMb: 150 }], 0.8)).toBe('');
  });
});

describe('ratioText', () => {
  it('prints two decimals, or as many as keep a figure on its side of the floor', () => {
    expect(ratioText(0.834, 0.8)).toBe('0.83');
    expect(ratioText(0.8, 0.8)).toBe('0.80');
    expect(ratioText(0.7996, 0.8)).toBe('0.7996');
    expect(ratioText(0.79999, 0.8)).toBe('0.79999');
    expect(ratioText(0.796, 0.8)).toBe('0.796');
    expect(ratioText(0.79999999999, 0.8)).toBe('0.79999999999');
    expect(ratioText(Number.NaN, 0.8)).toBe('n/a');
  });
});

describe('pairRatiosText', () => {
  it('lists the ratios in the order they ran, none rounded onto the floor', () => {
    expect(pairRatiosText([{ ratio: 0.98 }, { ratio: 0.7998 }, { ratio: 0.82 }], 0.8)).toBe('0.98, 0.7998, 0.82');
  });
});
