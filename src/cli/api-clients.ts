import type { TimeBudget } from '../common/time-budget.ts';
import type { Logger } from 'pino';
import type { Clock } from '../common/clock.ts';
import type { ApiEndpoint } from '../config/api-url.ts';
import { jobChain, type JobConfig } from '../config/job-schema.ts';
import { createSourceCounters, type SourceCounters } from '../common/source-counters.ts';
import { createBuilderSource } from '../source/builder-source.ts';
import { createHttpClient, type HttpClient } from '../source/http-client.ts';
import { createNodeSource, type NodeSource, type NodeSourceDeps } from '../source/node-source.ts';
import { chainIdOnce } from '../source/node-rpc.ts';
import { createRpcClient } from '../source/rpc-client.ts';
import { extendSource, type Source } from '../source/source.ts';
import { createTransfersClient } from '../source/transfers-client.ts';
import type { Warehouse } from '../warehouse/db.ts';
import { knownHeaders } from '../warehouse/headers.ts';
import { storedCounts, storedCoverage } from '../warehouse/stored-logs.ts';
import { learnedLogsStart, saveLogsRange, type KeptBlockLimit } from '../warehouse/logs-ranges.ts';
import { createSharedRateLimiter, rateLimitKey } from '../warehouse/shared-rate-limit.ts';

/** HTTP limits of a run: a page of 1000 transfers is about 450 KB, so 32 MB bounds memory, not data. */
export const HTTP_DEFAULTS = { timeoutMs: 30_000, maxResponseBytes: 32 * 1024 * 1024, retries: 8 } as const;

/** What of a job decides its source. */
export type SourceJob = Pick<JobConfig, 'name' | 'requestsPerSecond' | 'headerBatchSize'> & Partial<Pick<JobConfig, 'source' | 'logsRange' | 'chain'>>;

/** A source for one run or task, that can keep what it learned for the job's next run. */
export interface RunSource extends Source {
  /**
   * Keeps what the source learned for the job's next run: a node source's `eth_getLogs` range, for the
   * endpoint's host (never its URL). Nothing for a builder source, or a node source that made no call.
   */
  saveLearned(runId?: string): Promise<void>;
  /** The `eth_getLogs` range (blocks) the source learned so far; undefined for a builder source. */
  learnedRange(): number | undefined;
  /** What became of a block limit the node does not state, kept with the range (`RangeBook.blockLimit`); undefined for a builder source. */
  learnedBlockLimit(): KeptBlockLimit | 'gone' | undefined;
}

/**
 * Where a node source starts: its first `eth_getLogs` range (the job's, else the one learned), a block limit an earlier
 * run met, and the range that run learned, which answered under it (all but the job's from the warehouse).
 */
interface NodeStart {
  range: number | undefined;
  blockLimit: KeptBlockLimit | undefined;
  answeredBefore: number | undefined;
}

/**
 * The source a command reads, as the job says: the builder API's clients (`"source": "builder"`, the
 * default), or a node's JSON-RPC (`"source": "node"`), for `concurrency` chunks at once. A `requestsPerSecond`
 * limit is kept in the warehouse, so it holds for every process exporting from this endpoint into it, not
 * for this one alone. A node source starts its `eth_getLogs` range at the job's `logsRange`, else at the
 * range learned for the job and the endpoint's host (read from the warehouse at its first call), else at
 * the source's default.
 */
export function createSource(deps: {
  api: ApiEndpoint;
  logger: Logger;
  clock: Clock;
  warehouse: Warehouse;
  concurrency: number;
  job: SourceJob;
  /** A node source's deadline for one JSON-RPC answer (`--rpc-timeout`); the source's default when unset. */
  rpcTimeoutMs?: number | undefined;
  /** Where the run's time goes (`--time-budget`). */
  budget?: TimeBudget | undefined;
  /** The run's stop (Ctrl-C): calls on their way are dropped at once (`HttpClientDeps.stop`). */
  stop?: AbortSignal | undefined;
}): RunSource {
  const { api, logger, clock, warehouse, job } = deps;
  const { chain } = jobChain(job);
  const { requestsPerSecond } = job;
  const headerBatchSize = job.headerBatchSize ?? 100;
  const counters = createSourceCounters();
  const http = createHttpClient({
    endpoint: api,
    config: { ...HTTP_DEFAULTS, connections: deps.concurrency * 2 + 2, requestsPerSecond },
    logger,
    clock,
    counters,
    stop: deps.stop,
    ...(deps.budget && { budget: deps.budget }),
    ...(requestsPerSecond !== undefined && {
      limiter: createSharedRateLimiter({ warehouse, key: rateLimitKey(api.base), requestsPerSecond, clock }),
    }),
  });
  if (job.source !== 'node') {
    const builder = createBuilderSource({
      http,
      transfers: createTransfersClient({ http, budget: deps.budget }),
      rpc: createRpcClient({ http, batchSize: headerBatchSize }),
      counters,
    });
    return extendSource(builder, { saveLearned: async () => undefined, learnedRange: () => undefined, learnedBlockLimit: () => undefined });
  }
  const startRange = async (): Promise<NodeStart> => {
    try {
      const learned = await learnedLogsStart(warehouse.db, chain, job.name, api.host);
      return { range: job.logsRange ?? learned.blocks, blockLimit: learned.blockLimit, answeredBefore: learned.blocks };
    } catch (err) {
      logger.warn({
        msg: `could not read the eth_getLogs range learned before; starting from ${job.logsRange === undefined ? 'the default' : "the job's logsRange"}`,
        job: job.name,
        err: (err as Error).message,
      });
      return { range: job.logsRange, blockLimit: undefined, answeredBefore: undefined };
    }
  };
  const source = lazyNodeSource({
    http,
    counters,
    headerBatchSize,
    startRange,
    create: (start) =>
      nodeSource({
        http,
        counters,
        headerBatchSize,
        clock,
        logger,
        rpcTimeoutMs: deps.rpcTimeoutMs,
        startRange: start.range,
        blockLimit: start.blockLimit,
        answeredBefore: start.answeredBefore,
        storedHeaders: (blocks) => knownHeaders(warehouse.db, chain, blocks),
        storedRows: {
          coverage: (query) => storedCoverage(warehouse.db, chain, query),
          counts: (query) => storedCounts(warehouse.db, chain, query),
        },
        budget: deps.budget,
        chain,
      }),
  });
  return extendSource(source, {
    async saveLearned(runId?: string) {
      const blocks = source.learnedRange();
      if (blocks === undefined) return;
      const blockLimit = source.learnedBlockLimit();
      await saveLogsRange(warehouse.db, { chainId: chain, job: job.name, endpointHost: api.host, blocks, blockLimit, runId });
      logger.debug({ msg: 'kept the eth_getLogs range for the next run', job: job.name, host: api.host, blocks, blockLimit });
    },
  });
}

/** The node source of a run (`src/source/node-source.ts`; `probe` makes its own, without the warehouse). */
function nodeSource(deps: {
  http: HttpClient;
  counters: SourceCounters;
  headerBatchSize: number;
  clock: Clock;
  logger: Logger;
  rpcTimeoutMs: number | undefined;
  startRange: number | undefined;
  blockLimit: KeptBlockLimit | undefined;
  answeredBefore: number | undefined;
  storedHeaders: NonNullable<NodeSourceDeps['storedHeaders']>;
  storedRows: NonNullable<NodeSourceDeps['storedRows']>;
  budget: TimeBudget | undefined;
  /** The job's chain: its headers are checked by its hash rule. */
  chain: number;
}): NodeSource {
  return createNodeSource({
    chain: deps.chain,
    http: deps.http,
    counters: deps.counters,
    headerBatchSize: deps.headerBatchSize,
    clock: deps.clock,
    logger: deps.logger,
    storedHeaders: deps.storedHeaders,
    storedRows: deps.storedRows,
    ...(deps.budget && { budget: deps.budget }),
    ...(deps.rpcTimeoutMs !== undefined && { rpcTimeoutMs: deps.rpcTimeoutMs }),
    ...(deps.startRange !== undefined && { startRange: deps.startRange }),
    ...(deps.blockLimit !== undefined && { blockLimit: deps.blockLimit }),
    ...(deps.answeredBefore !== undefined && { answeredBefore: deps.answeredBefore }),
  });
}

/**
 * A node source made at its first call, once its first range is known (an answer of the warehouse), so that
 * the source is at hand at once where a caller needs it synchronously (a queued task's). Before that call it
 * has skipped nothing and learned nothing; closing it then closes the HTTP client it would have used.
 */
function lazyNodeSource(deps: {
  http: HttpClient;
  counters: SourceCounters;
  headerBatchSize: number;
  startRange: () => Promise<NodeStart>;
  create: (start: NodeStart) => NodeSource;
}): Source & { learnedRange(): number | undefined; learnedBlockLimit(): KeptBlockLimit | 'gone' | undefined } {
  let made: NodeSource | undefined;
  let making: Promise<NodeSource> | undefined;
  const real = (): Promise<NodeSource> => {
    making ??= deps.startRange().then((start) => {
      made = deps.create(start);
      return made;
    });
    return making;
  };
  return {
    fetchPage: async (query) => (await real()).fetchPage(query),
    endQuery: (query) => made?.endQuery(query),
    headersByHash: async (hashes) => (await real()).headersByHash(hashes),
    // asked once headers are: after the pages that made the source
    get checks() {
      return made?.checks;
    },
    // the node's: halved for good when it refuses a batch
    get headerBatchSize() {
      return made?.headerBatchSize ?? deps.headerBatchSize;
    },
    // asked before anything else of a run: the real source needs the warehouse's answer first
    chainId: chainIdOnce(deps.http),
    chainHead: async (contracts) => (await real()).chainHead(contracts),
    tokenMetadata: async (contract) => (await real()).tokenMetadata(contract),
    skippedLogs: () => made?.skippedLogs() ?? new Map(),
    learnedRange: () => made?.learnedRange(),
    learnedBlockLimit: () => made?.learnedBlockLimit(),
    counters: deps.counters,
    async close() {
      const source = making ? await making.catch(() => undefined) : undefined;
      await (source ? source.close() : deps.http.close());
    },
  };
}
