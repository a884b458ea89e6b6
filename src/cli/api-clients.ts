import type { Logger } from 'pino';
import type pg from 'pg';
import type { Clock } from '../common/clock.ts';
import type { ApiEndpoint } from '../source/api-url.ts';
import { createSourceCounters, type SourceCounters } from '../source/counters.ts';
import { createHttpClient, type HttpClient } from '../source/http-client.ts';
import { createRpcClient } from '../source/rpc-client.ts';
import { createTransfersClient } from '../source/transfers-client.ts';
import { createSharedRateLimiter, rateLimitKey } from '../warehouse/shared-rate-limit.ts';

/** HTTP limits of a run: a page of 1000 transfers is about 450 KB, so 32 MB bounds memory, not data. */
export const HTTP_DEFAULTS = { timeoutMs: 30_000, maxResponseBytes: 32 * 1024 * 1024, retries: 8 } as const;

export interface ApiClients {
  http: HttpClient;
  transfers: ReturnType<typeof createTransfersClient>;
  rpc: ReturnType<typeof createRpcClient>;
  counters: SourceCounters;
}

/**
 * The chain API's clients for `concurrency` chunks at once. A `requestsPerSecond` limit is kept in the
 * warehouse (`pool`), so it holds for every process exporting from this API into it, not for this one alone.
 */
export function createApiClients(deps: {
  api: ApiEndpoint;
  logger: Logger;
  clock: Clock;
  pool: pg.Pool;
  concurrency: number;
  requestsPerSecond: number | undefined;
  /** `erigon_getHeaderByHash` calls per JSON-RPC POST (the job's `headerBatchSize`). */
  headerBatchSize: number;
}): ApiClients {
  const { api, logger, clock, pool, requestsPerSecond } = deps;
  const counters = createSourceCounters();
  const http = createHttpClient({
    endpoint: api,
    config: { ...HTTP_DEFAULTS, connections: deps.concurrency * 2 + 2, requestsPerSecond },
    logger,
    clock,
    counters,
    ...(requestsPerSecond !== undefined && {
      limiter: createSharedRateLimiter({ pool, key: rateLimitKey(api.base), requestsPerSecond, clock }),
    }),
  });
  return { http, transfers: createTransfersClient({ http }), rpc: createRpcClient({ http, batchSize: deps.headerBatchSize }), counters };
}
