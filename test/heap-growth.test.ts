import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { YOUNG_GENERATION_BYTES } from '../src/cli/young-generation.ts';
import { collect, REPO_DIR } from './helpers/cli.ts';

const HEAP_GROWTH = pathToFileURL(path.join(REPO_DIR, 'dist', 'src', 'cli', 'heap-growth.js')).href;

/**
 * A fresh Node process (its young generation at its smallest, allowed to grow to 32 MiB, as on a 64-bit machine with
 * a few GB of memory, whatever NODE_OPTIONS says) that keeps the last 100,000 small objects it makes alive, 600,000
 * in all, yielding to the event loop every 10,000, and prints the largest new space it saw. `limited`: it first
 * calls the CLI's `limitHeapGrowth` (compiled), as `run` and `backfill` do for either source.
 */
async function largestNewSpace(limited: boolean): Promise<number> {
  const script = `
    import { getHeapSpaceStatistics } from 'node:v8';
    if (${JSON.stringify(limited)}) (await import(${JSON.stringify(HEAP_GROWTH)})).limitHeapGrowth();
    const newSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
    const kept = new Array(100_000);
    let largest = 0;
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < kept.length; i++) {
        kept[i] = { text: 'row ' + round + ' ' + i, n: i };
        if (i % 10_000 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      largest = Math.max(largest, newSpace());
    }
    console.log(JSON.stringify({ largest }));`;
  const child = spawn(process.execPath, ['--max-semi-space-size=16', '--input-type=module', '-e', script], { cwd: REPO_DIR });
  const r = await collect(child, 30_000);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { largest: number }).largest;
}

describe('the heap of a run', () => {
  it('keeps the young generation at 16 MiB, where the same allocations grow it past that without', async () => {
    const [limited, unlimited] = await Promise.all([largestNewSpace(true), largestNewSpace(false)]);
    // the same work grows an unsteered young generation past the cap: the check below could fail
    expect(unlimited).toBeGreaterThan(YOUNG_GENERATION_BYTES);
    expect(limited).toBeLessThanOrEqual(YOUNG_GENERATION_BYTES);
    // and it still grows to the cap: smaller would cost a run more collections
    expect(limited).toBe(YOUNG_GENERATION_BYTES);
  });
});
