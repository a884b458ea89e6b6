import type { Span } from '../common/spans.ts';
import type { LogsRefusal } from './provider-errors.ts';

/**
 * What the warehouse holds of one contract's logs near a query's next calls: a window of its blocks, read as the
 * query moves down, with the rows stored in each of its blocks that holds any, and the spans a job read in full (the
 * coverage ledger, any job's). A re-read of such blocks sizes each `eth_getLogs` call by these rows instead of by the
 * logs per block of the last answers, which vary about twofold from one stretch to the next: sized by the answers, a
 * second run of the bench's whole chain was refused up to 3 times in about 170 calls; by the rows, none in about 150
 * (bench/NOTES.md, "A thirtieth day").
 */
export interface StoredLogs {
  /** The window: every block from `fromBlock` to `toBlock` is counted. */
  fromBlock: number;
  toBlock: number;
  /** The window's blocks that hold rows, newest first. */
  blocks: Float64Array;
  /** `above[i]`: the rows of `blocks[0]` to `blocks[i - 1]` (so `above[0]` is 0, and the rows of a span are a difference). */
  above: Float64Array;
  /** The spans read in full, ascending and apart (merged where they touch). */
  covered: readonly Span[];
}

/**
 * A window of rows per block as the warehouse counts them (newest block first, each block once), with its cumulative
 * rows made.
 *
 * @example storedWindow({ fromBlock: 10, toBlock: 20, covered }, [20, 15], [3, 4]).above // → Float64Array [0, 3, 7]
 */
export function storedWindow(window: { fromBlock: number; toBlock: number; covered: readonly Span[] }, blocks: ArrayLike<number>, rows: ArrayLike<number>): StoredLogs {
  const above = new Float64Array(blocks.length + 1);
  for (let i = 0; i < blocks.length; i++) above[i + 1] = above[i]! + rows[i]!;
  return { ...window, blocks: Float64Array.from(blocks), above };
}

/** The index of the newest block of `s` at or below `block` (its length when none is). */
function atOrBelow(s: StoredLogs, block: number): number {
  let lo = 0;
  let hi = s.blocks.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (s.blocks[mid]! > block) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The rows of `s` stored over [from, top] (both within its window). */
function rowsOf(s: StoredLogs, from: number, top: number): number {
  return s.above[atOrBelow(s, from - 1)]! - s.above[atOrBelow(s, top)]!;
}

/** The rows of `s` from its window's first block up to `top`. */
export function rowsUpTo(s: StoredLogs, top: number): number {
  return rowsOf(s, s.fromBlock, Math.min(top, s.toBlock));
}

/** The first block of the span read in full that holds `block`, or undefined where none does. */
export function readFrom(covered: readonly Span[], block: number): number | undefined {
  return covered.find((c) => c.fromBlock <= block && block <= c.toBlock)?.fromBlock;
}

/** Whether every block of [from, top] is in the window of `s` and was read in full. */
function holdsSpan(s: StoredLogs, from: number, top: number): boolean {
  const read = readFrom(s.covered, top);
  return read !== undefined && read <= from && s.fromBlock <= from && top <= s.toBlock;
}

/**
 * The rows stored of them all over [from, top], or undefined where a block of it is outside a window or was not read in
 * full for one of them.
 *
 * @example countedRows([storedWindow({ fromBlock: 1000, toBlock: 1019, covered: [{ fromBlock: 0, toBlock: 1019 }] }, [1019, 1012, 1001], [5, 7, 9])], 1010, 1019) // → 12
 */
export function countedRows(stored: readonly StoredLogs[], from: number, top: number): number | undefined {
  if (!stored.length) return undefined;
  let rows = 0;
  for (const s of stored) {
    if (!holdsSpan(s, from, top)) return undefined;
    rows += rowsOf(s, from, top);
  }
  return rows;
}

/**
 * The span a call at `top` for these contracts asks, sized by the rows the warehouse holds: as many blocks down from
 * `top` as hold at most `target` logs of them all, within `longest` blocks; where the newest block with rows alone holds
 * more, down to that block (no call can ask less of it). Only over blocks every one of them read in full, within its
 * window: where that ends above the span's bottom, the span ends there, unless `range` (the range the answers so far
 * give) reaches further, which then stands. Undefined when `top` is not read in full for each of them, or outside a
 * window: the range then sizes the call as it would.
 *
 * @example
 * // blocks 1,019, 1,012 and 1,001 hold 5, 7 and 9 rows; all of 1,000–1,019 read
 * storedSpan([storedWindow({ fromBlock: 1000, toBlock: 1019, covered: [{ fromBlock: 1000, toBlock: 1019 }] }, [1019, 1012, 1001], [5, 7, 9])], 1019, { target: 15, longest: 1000, range: 4 })
 * // → 18: blocks 1,002–1,019, 12 rows (block 1,001 would make 21)
 */
export function storedSpan(stored: readonly StoredLogs[], top: number, o: { target: number; longest: number; range: number }): number | undefined {
  if (!stored.length) return undefined;
  // the lowest block every one of them read in full, up to `top`, within its window
  let floor = Number.NEGATIVE_INFINITY;
  for (const s of stored) {
    const read = readFrom(s.covered, top);
    if (read === undefined || top < s.fromBlock || top > s.toBlock) return undefined;
    floor = Math.max(floor, read, s.fromBlock);
  }
  const lowest = Math.max(floor, top - o.longest + 1);
  // each one's next block with rows, newest first, taken together block by block
  const next = stored.map((s) => atOrBelow(s, top));
  let logs = 0;
  for (;;) {
    let block = Number.NEGATIVE_INFINITY;
    for (const [i, s] of stored.entries()) if (next[i]! < s.blocks.length) block = Math.max(block, s.blocks[next[i]!]!);
    if (block < lowest) break;
    let add = 0;
    for (const [i, s] of stored.entries()) {
      if (s.blocks[next[i]!] !== block) continue;
      add += s.above[next[i]! + 1]! - s.above[next[i]!]!;
      next[i]!++;
    }
    if (logs + add > o.target) return logs === 0 ? top - block + 1 : top - block;
    logs += add;
  }
  // every block down to `lowest` holds no more than the target: where that is the floor, a longer range stands
  const span = top - lowest + 1;
  return lowest === floor && o.range > span ? Math.min(o.range, o.longest) : span;
}

/**
 * Whether a refusal shows that the rows stored over the span refused are fewer than the node's logs there (rows deleted
 * since their blocks were read): refused as too many logs (not for its blocks, not left unanswered), where the rows
 * stored are no more than the node is known to answer in one call (`answers`: its stated cap, or the most logs an
 * answer held). A cap lower than the rows, stated or not, shows nothing.
 *
 * @example rowsProvedTooFew({ code: -32005, message: 'query returned more than 500 results' }, 120, 500) // → true
 */
export function rowsProvedTooFew(refusal: LogsRefusal, rowsStored: number | undefined, answers: number): boolean {
  if (refusal.timedOut || refusal.blocks || refusal.maxRange !== undefined) return false;
  return rowsStored !== undefined && answers > 0 && rowsStored <= answers;
}
