import type { SourceCounters } from '../common/source-counters.ts';
import type { HeaderChecker } from './header-check.ts';
import type { TokenMetadata, TransfersPage } from './transfers-page.ts';

export interface PageQuery {
  contract: string;
  /** Inclusive. */
  fromBlock: number;
  /** Inclusive. */
  toBlock: number;
  pageSize: number;
  /** The previous page's `nextPageKey`, given back unchanged. */
  pageKey?: string | undefined;
}

/**
 * The checks a source already runs on what it answers, with what they remember (one run's): the pipeline checks
 * the same headers with them, so no header whose hash was verified is hashed twice, nor any checked twice against the same block.
 */
export interface SourceChecks {
  /** The chain whose hash rule `checkHeader` checks headers by: the pipeline uses it for its own chain only. */
  chain: number;
  checkHeader: HeaderChecker;
}

export interface SkippedLogCounts {
  erc721: number;
  other: number;
}

/**
 * Where a run reads the chain: what the pipeline needs of an endpoint, whatever speaks to it (the builder
 * API today). One source serves one run or one queued task, and counts its own requests.
 */
export interface Source {
  /** A chunk's next page: a contract's validated transfers in a block range, newest first, with the key of the page after. */
  fetchPage(query: PageQuery): Promise<TransfersPage>;
  /**
   * The pipeline reads no more pages of this query (its chunk ended, gave its lower blocks to another chunk and
   * reached them, restarted, or stopped): a source that expects its next page (the node source, to name it in a
   * call with others) forgets it.
   */
  endQuery?(query: Pick<PageQuery, 'contract' | 'fromBlock' | 'toBlock'>): void;
  /** The raw header of each hash (unchecked: see `checkHeader`), or null when the endpoint does not know the block. */
  headersByHash(hashes: readonly string[]): Promise<Map<string, unknown | null>>;
  /** The source's own header checks, when it runs them (the node source): the pipeline's reuse them. */
  readonly checks?: SourceChecks;
  /** Hashes per header request: callers that queue hashes send them in groups of this size. */
  readonly headerBatchSize: number;
  /** `eth_chainId`: which chain the endpoint serves (a run compares it with the job's chain before it writes). */
  chainId(): Promise<bigint | number>;
  /** The newest block a run plans up to, and what told it. */
  chainHead(contracts: readonly string[]): Promise<{ head: number; from: string }>;
  /** A token's name, symbol and decimals; fields the endpoint does not know are null. */
  tokenMetadata(contract: string): Promise<TokenMetadata>;
  /** Logs with the Transfer topic that are not ERC-20 transfers (ERC-721: 4 topics; other shapes), per contract: counted, never stored. */
  skippedLogs(): ReadonlyMap<string, SkippedLogCounts>;
  /** Requests, retries and rate limits so far. */
  readonly counters: SourceCounters;
  /** Ends the source's connections. */
  close(): Promise<void>;
}

/**
 * `source` with `extra`'s members added or in place of its own, each getter of either kept a getter: a spread would
 * copy what a getter gives when the copy is made (a lazy node source's `checks`: none before its first call), and
 * the pipeline asks later.
 *
 * @example const run = extendSource(lazy, { saveLearned: async () => undefined }); run.checks // the source's now, not at the copy
 */
export function extendSource<S extends Source, E extends object>(source: S, extra: E): Omit<S, keyof E> & E {
  return Object.defineProperties({}, { ...Object.getOwnPropertyDescriptors(source), ...Object.getOwnPropertyDescriptors(extra) }) as Omit<S, keyof E> & E;
}
