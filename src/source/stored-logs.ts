import type { Span } from '../common/spans.ts';

/**
 * What the warehouse holds of one contract's logs over a query's blocks, read before the query's first call: the
 * spans a job read in full (the coverage ledger, any job's), and the rows stored there, counted per bucket of
 * `bucketBlocks` blocks from `fromBlock` (bucket i: blocks fromBlock + i·bucketBlocks onwards). A re-read of such
 * blocks sizes each `eth_getLogs` call by these counts instead of by the logs per block of the last answers, which
 * vary about twofold from one stretch to the next: sized by them, a second run of the bench's whole chain was refused
 * up to 3 times in about 170 calls (bench/NOTES.md, "A thirtieth day").
 */
export interface StoredLogs {
  fromBlock: number;
  bucketBlocks: number;
  /** Rows stored per bucket. */
  counts: Int32Array;
  /** The spans read in full, ascending and apart (merged where they touch). */
  covered: readonly Span[];
}

/** Buckets a query's counts are kept in, at most: 32 KB a query; a query of 25,000 blocks counts per 4 blocks. */
export const STORED_BUCKETS = 8_192;

/** The blocks per bucket for a query over `blocks` blocks (`STORED_BUCKETS` at most). */
export function bucketBlocksFor(blocks: number): number {
  return Math.max(1, Math.ceil(blocks / STORED_BUCKETS));
}

/**
 * The span a call at `top` for these contracts asks, sized by the rows the warehouse holds: as many blocks down from
 * `top` as hold at most `target` logs of them all, counted per bucket (the bucket holding `top` counted whole, so a
 * span never holds more than counted), within `longest` blocks. Only over blocks every one of them has read in full:
 * where that ends above the span's bottom, the span ends there, unless `range` (the range the answers so far give)
 * reaches further, which then stands. Where the blocks of `top`'s bucket alone hold more than `target`, those blocks
 * (the fewest counted: one block, for buckets of one). Undefined when `top` is not read in full for each of them: the
 * range then sizes the call as it would.
 *
 * @example
 * // 10 rows a block, stored in buckets of 5 blocks from block 1,000, all of it read
 * storedSpan([{ fromBlock: 1000, bucketBlocks: 5, counts: Int32Array.of(50, 50, 50, 50), covered: [{ fromBlock: 1000, toBlock: 1019 }] }], 1019, { target: 120, longest: 1000, range: 4 })
 * // → 10: blocks 1,010–1,019, 100 rows (a third bucket would make 150)
 */
export function storedSpan(stored: readonly StoredLogs[], top: number, o: { target: number; longest: number; range: number }): number | undefined {
  if (!stored.length) return undefined;
  // the lowest block every one of them read in full, up to `top`, within its query
  let floor = Number.NEGATIVE_INFINITY;
  for (const s of stored) {
    const span = s.covered.find((c) => c.fromBlock <= top && top <= c.toBlock);
    if (!span || top < s.fromBlock || top >= s.fromBlock + s.counts.length * s.bucketBlocks) return undefined;
    floor = Math.max(floor, span.fromBlock, s.fromBlock);
  }
  const lowest = Math.max(floor, top - o.longest + 1);
  // each one's lowest bucket counted so far: a bucket is counted once, whichever step reaches it first
  const counted = stored.map(() => Number.POSITIVE_INFINITY);
  let logs = 0;
  let from = top + 1;
  // down step by step: a step takes the blocks below `from` down to the highest bucket start of them all (or `lowest`)
  while (from > lowest) {
    let start = lowest;
    let add = 0;
    for (const [i, s] of stored.entries()) {
      const bucket = Math.floor((from - 1 - s.fromBlock) / s.bucketBlocks);
      start = Math.max(start, s.fromBlock + bucket * s.bucketBlocks);
      if (bucket < counted[i]!) {
        add += s.counts[bucket]!;
        counted[i] = bucket;
      }
    }
    // the first step is taken whatever it holds: the blocks of the top's bucket, the fewest counted
    if (from <= top && logs + add > o.target) return top - from + 1;
    logs += add;
    from = start;
  }
  // every block down to `lowest` holds no more than the target: where that is the floor, a longer range stands
  const span = top - from + 1;
  return from === floor && o.range > span ? Math.min(o.range, o.longest) : span;
}
