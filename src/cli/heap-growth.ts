import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import type { SourceKind } from '../config/job-schema.ts';

/**
 * The young generation a node-source run lets V8 keep: two semi-spaces of 8 MiB, half of V8's largest on 64-bit
 * machines. Measured on 200,000-transfer backfills (hand runs, alternating builds, six each): peak resident memory
 * 203 MB on average against 212 MB through `eth_getLogs`, for 10 % more CPU (its answers of up to 10,000 logs
 * outlive more collections); 135 MB against 154 MB through the builder API, for 5 % more CPU, where memory was
 * within its target and speed is not. See README, "Node-source figures".
 */
export const YOUNG_GENERATION_BYTES = 16 * 2 ** 20;

/** V8's `--semi-space-growth-factor` (its default): the young generation doubles when it grows. */
const V8_GROWTH_FACTOR = 2;

/**
 * Sizes the heap of a run (`run`, `backfill`) for an export, which allocates much (pages, rows, headers, SQL)
 * and keeps little (about 25–45 MB live). Only those commands set it: the reference server keeps its whole chain in
 * memory, where more collections would only cost time.
 *
 * - The old generation grows by about half of what survived the last full collection before the next one, where V8
 *   would allow up to four times on a machine with much memory. V8 reads `--heap-growing-percent` at every
 *   collection, so setting it in the running process works, and the command line stays as it is. It caps nothing:
 *   the heap still grows as large as a job needs. Measured on a 200,000-transfer backfill: about 40 MB less peak
 *   resident memory, for 12 full collections instead of 3 (0.2 s more, 2 % of its CPU).
 * - A node source's run keeps its young generation at `YOUNG_GENERATION_BYTES` (`capYoungGeneration`): its answers
 *   are what take it over 200 MB. A builder run's does not: it stays within that, and its first load is bound by CPU.
 *
 * @example limitHeapGrowth(job.source); await exportJob(options, job, 'backfill');
 */
export function limitHeapGrowth(source: SourceKind): void {
  setFlagsFromString('--heap-growing-percent=50');
  if (source === 'node') capYoungGeneration(YOUNG_GENERATION_BYTES);
}

/**
 * Keeps V8's young generation (its new space: two semi-spaces, where objects are made) at most `bytes`, from the
 * running process. V8 sizes it at start-up (`--max-semi-space-size`, 16 MiB each on 64-bit machines), which only
 * the `node` command line can change, but it reads `--semi-space-growth-factor` each time the space grows: after
 * every collection this lets it grow (V8's factor) while it is smaller than `bytes`, and not (factor 1) once it is
 * there, or again when V8 shrank it. V8 tells of collections between two turns of the event loop, so a space
 * that grows twice within one turn (more than its own size kept alive twice over) can pass `bytes`; an export's
 * turns each handle one answer. Returns a function that stops steering it (the growth factor stays as it is).
 *
 * @example const stop = capYoungGeneration(16 * 2 ** 20); // the new space grows as V8 grows it, to 16 MiB and no further
 */
export function capYoungGeneration(bytes: number): () => void {
  let factor = V8_GROWTH_FACTOR;
  const steer = () => {
    const size = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size;
    if (size === undefined) return;
    const wanted = size < bytes ? V8_GROWTH_FACTOR : 1;
    if (wanted === factor) return;
    factor = wanted;
    setFlagsFromString(`--semi-space-growth-factor=${factor}`);
  };
  const observer = new PerformanceObserver(steer);
  observer.observe({ entryTypes: ['gc'] });
  steer();
  return () => observer.disconnect();
}
