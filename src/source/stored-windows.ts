import type { Logger } from 'pino';
import type { Span } from '../common/spans.ts';
import type { Member } from './logs-groups.ts';
import { memberKey } from './logs-groups.ts';
import { readFrom, rowsUpTo, type StoredLogs, storedWindow } from './stored-logs.ts';

/** How the warehouse's rows are read (src/warehouse/stored-logs.ts). */
export interface StoredRowsReader {
  /**
   * The spans of [fromBlock, toBlock] any job of the chain read in full for the contract (merged), with the rows and
   * blocks of those jobs' coverage records that touch it; undefined when none was read in full.
   */
  coverage(query: { contract: string; fromBlock: number; toBlock: number }): Promise<{ covered: Span[]; rows: number; blocks: number } | undefined>;
  /**
   * The contract's rows stored in each block of [fromBlock, toBlock] that holds any, newest block first: at most `limit`
   * blocks (the newest).
   */
  counts(query: { contract: string; fromBlock: number; toBlock: number; limit: number }): Promise<{ blocks: number[]; rows: number[] }>;
}

/** A window is read over the blocks that hold about this many calls' worth of rows, by the rows per block last seen. */
const WINDOW_CALLS = 16;
/** Blocks with rows a window holds, at most (16 bytes each): the newest, when rows per block were misjudged. */
const WINDOW_BLOCKS = 16_384;
/** A window spans this many times the blocks of the one before, at most: rows per block misjudged from a quiet one stay bounded. */
const WINDOW_GROWTH = 4;
/** What a query's window keeps below the top it is asked at, at least, in the logs its calls aim at: fewer, it is read again from there. */
const REFRESH_CALLS = 4;
/** Queries whose windows are kept at once, at most: more run at once only with many contracts. */
const QUERIES_KEPT = 256;

interface QueryRows {
  /** Sized by the answers alone: none of its blocks read in full, the rows could not be read, or they proved too few. */
  off: boolean;
  /** The coverage was read (`covered` and `rowsPerBlock` are its). */
  coverageRead: boolean;
  covered: readonly Span[];
  /** Rows per block where the query was last read: the next window's blocks are sized by it. */
  rowsPerBlock: number;
  /** The blocks the last window spanned. */
  windowBlocks?: number;
  window?: StoredLogs;
  loading?: Promise<void> | undefined;
}

export interface StoredWindows {
  /**
   * Before a page of `me` at `top`: its window holds the rows of at least 4 calls' worth below `top` (or down to the
   * query's first block), read again from `top` down where not; a call of `target` logs sizes the window. Never fails:
   * what cannot be read is told and the query is sized by its answers.
   */
  ready(me: Member, top: number, target: number): Promise<void>;
  /** Each member's window, or undefined when one of them has none. */
  windows(members: readonly Member[]): StoredLogs[] | undefined;
  /** The rows stored proved fewer than the node's logs (deleted since they were read): these queries are sized by their answers from now on. */
  tooFew(members: readonly Member[]): void;
  /** The query ended: nothing of it is kept. */
  forget(me: Member): void;
}

/**
 * The rows the warehouse holds near each query's next calls, read a window at a time as the query moves down: the
 * coverage once (which blocks were read in full, and how many rows they held: the first window's size), then, at tops
 * read in full, the rows per block from the top down over about 16 calls' worth of rows (by the rows per block last
 * seen; at most 4 times the blocks of the window before, and 16,384 blocks with rows), whenever fewer than 4 calls'
 * worth are left below the top. A chunk of millions of blocks is never counted at once.
 *
 * @example
 * const stored = createStoredWindows({ reader, logger });
 * await stored.ready(usdc, 18_099_999, 7000); // reads the coverage, then the window 18,0xx,xxx–18,099,999
 * stored.windows([usdc, dai]); // → undefined until dai's first page is ready too
 */
export function createStoredWindows(deps: { reader: StoredRowsReader; logger?: Pick<Logger, 'warn'> | undefined }): StoredWindows {
  const queries = new Map<string, QueryRows>();

  const tell = (me: Member, err: unknown) =>
    deps.logger?.warn({ msg: 'could not read the stored rows; sizing eth_getLogs calls by the answers alone', contract: me.contract, err: (err as Error).message });

  /** Reads what `rows` lacks for a page at `top`: the coverage first, then the window from `top` down. */
  async function load(me: Member, rows: QueryRows, top: number, target: number): Promise<void> {
    if (!rows.coverageRead) {
      const coverage = await deps.reader.coverage(me);
      rows.coverageRead = true;
      if (coverage === undefined) {
        rows.off = true;
        return;
      }
      rows.covered = coverage.covered;
      rows.rowsPerBlock = coverage.rows / Math.max(1, coverage.blocks);
    }
    // blocks not read in full size no call: nothing to read until the query comes down to blocks that were
    if (readFrom(rows.covered, top) === undefined) return;
    const byRows = rows.rowsPerBlock > 0 ? Math.ceil((WINDOW_CALLS * target) / rows.rowsPerBlock) : Number.POSITIVE_INFINITY;
    const blocks = Math.min(byRows, rows.windowBlocks === undefined ? Number.POSITIVE_INFINITY : WINDOW_GROWTH * rows.windowBlocks);
    const asked = Math.max(me.fromBlock, top - blocks + 1);
    const counted = await deps.reader.counts({ contract: me.contract, fromBlock: asked, toBlock: top, limit: WINDOW_BLOCKS });
    // cut short at the limit: the window ends at the oldest block counted
    const fromBlock = counted.blocks.length === WINDOW_BLOCKS ? counted.blocks.at(-1)! : asked;
    rows.window = storedWindow({ fromBlock, toBlock: top, covered: rows.covered }, counted.blocks, counted.rows);
    rows.windowBlocks = top - fromBlock + 1;
    // the next window's blocks by this one's rows: logs per block change along a chain
    rows.rowsPerBlock = Math.max(rows.window.above.at(-1)!, 1) / rows.windowBlocks;
  }

  /** Whether the window holds what a page at `top` needs: `top`, and 4 calls' worth below it or the query's first block. */
  function holds(me: Member, rows: QueryRows, top: number, target: number): boolean {
    const w = rows.window;
    if (rows.off || w === undefined) return rows.off;
    if (top < w.fromBlock || top > w.toBlock) return false;
    return w.fromBlock <= me.fromBlock || rowsUpTo(w, top) >= REFRESH_CALLS * target;
  }

  return {
    async ready(me, top, target) {
      const key = memberKey(me);
      let rows = queries.get(key);
      // one read at a time for a query (a page asked again after a reorg may come while one is under way)
      while (rows?.loading) {
        await rows.loading;
        rows = queries.get(key);
      }
      if (rows && holds(me, rows, top, target)) return;
      if (rows === undefined) {
        rows = { off: false, coverageRead: false, covered: [], rowsPerBlock: 0 };
        queries.set(key, rows);
        if (queries.size > QUERIES_KEPT) queries.delete(queries.keys().next().value!);
      }
      const entry = rows;
      entry.loading = load(me, entry, top, target)
        .catch((err: unknown) => {
          tell(me, err);
          entry.off = true;
        })
        .finally(() => {
          entry.loading = undefined;
        });
      await entry.loading;
    },
    windows(members) {
      const out: StoredLogs[] = [];
      for (const m of members) {
        const rows = queries.get(memberKey(m));
        if (!rows?.window || rows.off) return undefined;
        out.push(rows.window);
      }
      return out;
    },
    tooFew(members) {
      for (const m of members) {
        const rows = queries.get(memberKey(m));
        if (rows) rows.off = true;
      }
    },
    forget(me) {
      queries.delete(memberKey(me));
    },
  };
}
