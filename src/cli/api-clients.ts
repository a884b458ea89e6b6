import type { Logger } from 'pino';
import type { Clock } from '../common/clock.ts';
import type { ApiEndpoint } from '../config/api-url.ts';
import { createSourceCounters } from '../common/source-counters.ts';
import { createBuilderSource } from '../source/builder-source.ts';
import { createHttpClient } from '../source/http-client.ts';
import { createRpcClient } from '../source/rpc-client.ts';
import type { Source } from '../source/source.ts';
import { createTransfersClient } from '../source/transfers-client.ts';
import type { Warehouse } from '../warehouse/db.ts';
import { createSharedRateLimiter, rateLimitKey } from '../warehouse/shared-rate-limit.ts';

/** HTTP limits of a run: a page of 1000 transfers is about 450 KB, so 32 MB bounds memory, not data. */
export const HTTP_DEFAULTS = { timeoutMs: 30_000, maxResponseBytes: 32 * 1024 * 1024, retries: 8 } as const;

/**
 * The source a command reads: the chain API's clients for `concurrency` chunks at once. A `requestsPerSecond` limit is kept in the
 * warehouse, so it holds for every process exporting from this API into it, not for this one alone.
 */
export function createSource(deps: {
  api: ApiEndpoint;
  logger: Logger;
  clock: Clock;
  warehouse: Warehouse;
  concurrency: number;
  requestsPerSecond: number | undefined;
  /** `erigon_getHeaderByHash` calls per JSON-RPC POST (the job's `headerBatchSize`). */
  headerBatchSize: number;
}): Source {
  const { api, logger, clock, warehouse, requestsPerSecond } = deps;
  const counters = createSourceCounters();
  const http = createHttpClient({
    endpoint: api,
    config: { ...HTTP_DEFAULTS, connections: deps.concurrency * 2 + 2, requestsPerSecond },
    logger,
    clock,
    counters,
    ...(requestsPerSecond !== undefined && {
      limiter: createSharedRateLimiter({ warehouse, key: rateLimitKey(api.base), requestsPerSecond, clock }),
    }),
  });
  return createBuilderSource({ http, transfers: createTransfersClient({ http }), rpc: createRpcClient({ http, batchSize: deps.headerBatchSize }), counters });
}
