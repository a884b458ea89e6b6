import type { DevnetStats } from '../src/devnet/stats.ts';

/** JSON-RPC calls the exporter puts in one POST unless the job says otherwise (`headerBatchSize`'s default). */
export const HEADER_BATCH_SIZE = 100;

export interface ApiUse {
  /** getTokenTransfers requests the server answered. */
  transferRequests: number;
  /** Their bound: 1.01 × ceil(rows / pageSize) + 2 × concurrency. */
  transferRequestsBound: number;
  /** The least any reader needs: ceil(rows / pageSize). */
  pagesNeeded: number;
  /** erigon_getHeaderByHash calls, and how many there should be (distinct new blocks). */
  headerCalls: number;
  headerCallsExpected: number;
  /** POSTs that carried header calls, and ceil(header calls / batch size). */
  headerPosts: number;
  headerPostsExpected: number;
  /** The run's `headerBatchSize`. */
  headerBatchSize: number;
  /** Every JSON-RPC POST, eth_blockNumber included. */
  rpcPosts: number;
  /** Answers that were errors, by HTTP status or JSON-RPC code (e.g. `"429"`). */
  errors: Record<string, number>;
}

/**
 * The API use of one run against the targets: getTokenTransfers requests ≤ 1.01 × ceil(rows / pageSize) +
 * 2 × concurrency; header calls = distinct new blocks; header POSTs = ceil(header calls / headerBatchSize, 100 unless given). Every call
 * of another method is sent alone, so header POSTs are the POSTs less those calls.
 *
 * @example apiUse(stats, { rows: 1_000_000, newBlocks: 95_000, pageSize: 1000, concurrency: 4 })
 * // → { transferRequests: 1007, transferRequestsBound: 1018, headerCalls: 95000, headerCallsExpected: 95000, headerPosts: 950, … }
 */
export function apiUse(stats: DevnetStats, run: { rows: number; newBlocks: number; pageSize: number; concurrency: number; headerBatchSize?: number }): ApiUse {
  const headerBatchSize = run.headerBatchSize ?? HEADER_BATCH_SIZE;
  const pagesNeeded = Math.ceil(run.rows / run.pageSize);
  const headerCalls = stats.rpcCalls['erigon_getHeaderByHash'] ?? 0;
  const otherCalls = Object.entries(stats.rpcCalls).reduce((sum, [method, n]) => (method === 'erigon_getHeaderByHash' ? sum : sum + n), 0);
  return {
    transferRequests: stats.getTokenTransfers,
    transferRequestsBound: 1.01 * pagesNeeded + 2 * run.concurrency,
    pagesNeeded,
    headerCalls,
    headerCallsExpected: run.newBlocks,
    headerPosts: Math.max(0, stats.rpcHttpRequests - otherCalls),
    headerPostsExpected: Math.ceil(headerCalls / headerBatchSize),
    headerBatchSize,
    rpcPosts: stats.rpcHttpRequests,
    errors: stats.errors,
  };
}

/** Whether one run's API use meets all three targets. */
export function apiUseOk(use: ApiUse): boolean {
  return use.transferRequests <= use.transferRequestsBound && use.headerCalls === use.headerCallsExpected && use.headerPosts === use.headerPostsExpected;
}
