import type { Logger } from 'pino';
import { systemClock, type Clock } from '../common/clock.ts';
import type { JobConfig } from '../config/job-schema.ts';
import type { ApiEndpoint } from '../source/api-url.ts';
import { createSourceCounters } from '../source/counters.ts';
import { createHttpClient } from '../source/http-client.ts';
import { createRpcClient } from '../source/rpc-client.ts';
import { createTransfersClient } from '../source/transfers-client.ts';
import { createProgress } from '../pipeline/progress.ts';
import { runJob, type RunSummary } from '../pipeline/run-job.ts';
import { createWarehouse, describeConnectionError } from '../warehouse/db.ts';
import { createSharedRateLimiter, rateLimitKey } from '../warehouse/shared-rate-limit.ts';
import { pendingMigrations } from '../warehouse/migrate.ts';
import { FatalError } from '../common/errors.ts';
import type { RunMetrics } from '../metrics/run-metrics.ts';

/** HTTP limits of a run: a page of 1000 transfers is about 450 KB, so 32 MB bounds memory, not data. */
export const HTTP_DEFAULTS = { timeoutMs: 30_000, maxResponseBytes: 32 * 1024 * 1024, retries: 8 } as const;

export interface ExportOptions {
  databaseUrl: string;
  api: ApiEndpoint;
  logger: Logger;
  clock?: Clock;
  /** Show progress bars (a terminal) rather than log lines. */
  tty: boolean;
  /** Prometheus metrics to keep up to date. */
  metrics?: RunMetrics;
}

/**
 * Builds every part of a run from the settings (warehouse, HTTP client, API clients, progress), runs
 * the job, and closes what it opened. The one place where the stages meet their real dependencies.
 */
export async function exportJob(options: ExportOptions, job: Readonly<JobConfig>, command: 'run' | 'backfill'): Promise<RunSummary> {
  const { logger } = options;
  const clock = options.clock ?? systemClock;
  const warehouse = createWarehouse({ databaseUrl: options.databaseUrl, logger, maxConnections: job.concurrency + 4 });
  const counters = createSourceCounters();
  const http = createHttpClient({
    endpoint: options.api,
    config: { ...HTTP_DEFAULTS, connections: job.concurrency * 2 + 2, requestsPerSecond: job.requestsPerSecond },
    logger,
    clock,
    counters,
    // a limit holds for every process exporting from this API into this warehouse, not for this run alone
    ...(job.requestsPerSecond !== undefined && {
      limiter: createSharedRateLimiter({ pool: warehouse.pool, key: rateLimitKey(options.api.base), requestsPerSecond: job.requestsPerSecond, clock }),
    }),
  });
  try {
    const pending = await pendingMigrations(warehouse).catch((err: unknown) => {
      throw describeConnectionError(err);
    });
    if (pending.length) {
      throw new FatalError(`The warehouse is not migrated (${pending.length} migration(s) pending: ${pending.join(', ')}). Run \`erc20-etl migrate\` first.`);
    }
    return await runJob(
      {
        warehouse,
        transfers: createTransfersClient({ http }),
        rpc: createRpcClient({ http }),
        counters,
        endpoint: options.api,
        logger,
        clock,
        progress: createProgress({ tty: options.tty, logger, job: job.name }),
        ...(options.metrics && { metrics: options.metrics }),
      },
      job,
      command,
    );
  } finally {
    await http.close().catch(() => undefined);
    await warehouse.close().catch(() => undefined);
  }
}
