/** A first load and the plain COPY of the same rows, timed one after the other. */
export interface PairRatio {
  /** copy ÷ load: the first load's rows per second over the plain COPY's. */
  ratio: number;
  loadSeconds: number;
  copySeconds: number;
  /** The first load's peak RSS, MB. */
  peakRssMb: number;
}

/**
 * The pair whose ratio is the median of the pairs' (of an even number, the lower of the two middle ones), so the
 * figure and everything printed beside it (CPU, budget) come from one and the same load. A single pair's ratio moves
 * with the machine's speed as much as with the load: the plain COPY of the same 1,000,000 rows took 14.3–21.0 s in
 * one day's three one-pair node bench runs (bench/NOTES.md, "A twenty-fourth day").
 *
 * @example medianPair([{ ratio: 0.98 }, { ratio: 0.7 }, { ratio: 0.95 }]) // → { ratio: 0.95 }
 * medianPair([{ ratio: 0.9 }, { ratio: 0.7 }]) // → { ratio: 0.7 }
 */
export function medianPair<T extends { ratio: number }>(pairs: readonly T[]): T {
  if (!pairs.length) throw new Error('medianPair: no pairs');
  // a ratio of no number (a time of 0) has no place in the order: the run is broken, not slow
  const broken = pairs.find((p) => !Number.isFinite(p.ratio));
  if (broken) throw new Error(`medianPair: a pair's ratio is ${broken.ratio}`);
  const sorted = [...pairs].sort((a, b) => a.ratio - b.ratio);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/**
 * The pairs as the bench prints them beside the figure (their median, or of an even number the lower middle), in the
 * order they ran, each ratio as `ratioText` prints it against `floor`; '' for a single pair.
 *
 * @example pairsText([{ ratio: 0.98, loadSeconds: 18.9, copySeconds: 18.6, peakRssMb: 187 }, { ratio: 0.7998, loadSeconds: 22, copySeconds: 17.6, peakRssMb: 172 }], 0.8)
 * // → 'lower middle of 2 pairs, in order: 0.98 (18.9 s vs 18.6 s; 187 MB), 0.7998 (22.0 s vs 17.6 s; 172 MB)'
 */
export function pairsText(pairs: readonly PairRatio[], floor: number): string {
  if (pairs.length < 2) return '';
  const each = pairs.map((p) => `${ratioText(p.ratio, floor)} (${p.loadSeconds.toFixed(1)} s vs ${p.copySeconds.toFixed(1)} s; ${Math.round(p.peakRssMb)} MB)`);
  const which = pairs.length % 2 ? 'median' : 'lower middle';
  return `${which} of ${pairs.length} pairs, in order: ${each.join(', ')}`;
}

/**
 * The pairs' ratios, in the order they ran, each as `ratioText` prints it against `floor`: what the table shows beside
 * the median.
 *
 * @example pairRatiosText([{ ratio: 0.98 }, { ratio: 0.7998 }, { ratio: 0.82 }], 0.8) // → '0.98, 0.7998, 0.82'
 */
export function pairRatiosText(pairs: readonly { ratio: number }[], floor: number): string {
  return pairs.map((p) => ratioText(p.ratio, floor)).join(', ');
}

/**
 * A ratio as the table prints it beside the floor it is held to: two decimals, or as many more (up to six) as it takes
 * not to round it onto the floor's other side, so that a figure that fails never reads as one that meets it.
 *
 * @example ratioText(0.83, 0.8) // → '0.83'
 * ratioText(0.7996, 0.8) // → '0.7996' (two decimals would read 0.80, which meets the floor)
 */
export function ratioText(n: number, floor: number): string {
  if (!Number.isFinite(n)) return 'n/a';
  for (let digits = 2; digits <= 6; digits++) {
    const text = n.toFixed(digits);
    if (Number(text) >= floor === n >= floor) return text;
  }
  // every digit: a number is printed as the shortest text that reads back as itself, so on its own side
  return String(n);
}
