import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/**
 * The young generation a run (`run`, `backfill`) lets V8 keep: 16 MiB in all (two semi-spaces of 8 MiB), half of what
 * V8 allows on a 64-bit machine with a few GB of memory. Measured on 200,000-transfer node backfills (hand runs,
 * alternating builds, six each): peak resident memory 203 MB on average against 212 MB, for 10 % more CPU. Builder
 * runs were capped later, once their 1,000,000-transfer first loads went over 200 MB on a slower machine (170–179 MB
 * with the cap against 188–208 MB). See bench/NOTES.md, "Node-source figures" and "A thirteenth day".
 */
export const YOUNG_GENERATION_BYTES = 16 * 2 ** 20;

/** V8's `--semi-space-growth-factor` (its default): the young generation doubles when it grows. */
export const V8_GROWTH_FACTOR = 2;

/**
 * The `--semi-space-growth-factor` for a young generation of `size` bytes kept at most `bytes`: V8's own while
 * one more growth stays within `bytes`, else 1 (V8 then keeps its size when it would grow it).
 *
 * @example growthFactor(8 * 2 ** 20, 16 * 2 ** 20) // → 2 (it may grow to 16 MiB)
 * growthFactor(16 * 2 ** 20, 16 * 2 ** 20) // → 1
 */
export function growthFactor(size: number, bytes: number): number {
  return size * V8_GROWTH_FACTOR <= bytes ? V8_GROWTH_FACTOR : 1;
}

/**
 * Keeps V8's young generation (its new space, where objects are made) within `bytes` as best it can, from the
 * running process. V8 sets its largest size at start-up (`--max-semi-space-size`), which only `node`'s command line
 * or `NODE_OPTIONS` can change, but it reads `--semi-space-growth-factor` each time the space grows: after every
 * collection the factor is set for the space's new size (`growthFactor`), so it grows while it can, stops within
 * `bytes`, and grows back if V8 shrank it. Node reports collections a little after they happen: a stretch of work
 * that grows the space twice before the report (more than its own size kept alive twice over, with no pause
 * between) can take it past `bytes`, where it then stays, as V8 would have left it. Returns a function that stops
 * steering it and gives V8 its own factor back.
 *
 * @example const stop = capYoungGeneration(YOUNG_GENERATION_BYTES); // … the run …; stop();
 */
export function capYoungGeneration(bytes: number): () => void {
  let factor = V8_GROWTH_FACTOR;
  const setFactor = (wanted: number) => {
    if (wanted === factor) return;
    factor = wanted;
    setFlagsFromString(`--semi-space-growth-factor=${factor}`);
  };
  const steer = () => {
    // a Node without this space in its statistics is left as V8 sizes it
    const size = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size;
    if (size !== undefined) setFactor(growthFactor(size, bytes));
  };
  const observer = new PerformanceObserver(steer);
  observer.observe({ entryTypes: ['gc'] });
  steer();
  return () => {
    observer.disconnect();
    setFactor(V8_GROWTH_FACTOR);
  };
}
