import { setFlagsFromString } from 'node:v8';
import { capYoungGeneration, YOUNG_GENERATION_BYTES } from './young-generation.ts';

/**
 * Sizes the heap of a run (`run`, `backfill`) for an export, which allocates much (pages, rows, headers, SQL)
 * and keeps little (about 25 MB live). Only those commands set it: the reference server keeps its whole chain in
 * memory, where more collections would only cost time. Both settings last as long as the process.
 *
 * - The old generation grows by about half of what survived the last full collection before the next one, where V8
 *   would allow up to four times on a machine with much memory. V8 reads `--heap-growing-percent` at every
 *   collection, so setting it in the running process works, and the command line stays as it is. It caps nothing:
 *   the heap still grows as large as a job needs. Measured on a 200,000-transfer backfill: about 40 MB less peak
 *   resident memory, for 12 full collections instead of 3 (0.2 s more, 2 % of its CPU).
 * - The young generation is kept at `YOUNG_GENERATION_BYTES` (`capYoungGeneration`), for either source. Node-source
 *   runs peaked over the 200 MB target without it. Builder runs were left uncapped until a slower machine took their
 *   1,000,000-transfer first loads to 188–208 MB of peak RSS (eight hand runs, two over 200 MB; 192–205 MB in the
 *   bench). With the cap they peaked at 170–179 MB in three hand runs, for about 5 % more of the exporter's CPU
 *   (bench/NOTES.md, "A thirteenth day").
 *
 * @example limitHeapGrowth(); await exportJob(options, job, 'backfill');
 */
export function limitHeapGrowth(): void {
  setFlagsFromString('--heap-growing-percent=50');
  capYoungGeneration(YOUNG_GENERATION_BYTES);
}
