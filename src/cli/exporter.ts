import type { Logger } from 'pino';
import { systemClock, type Clock } from '../common/clock.ts';
import type { JobConfig } from '../config/job-schema.ts';
import type { ApiEndpoint } from '../config/api-url.ts';
import type { TerminalLines } from '../common/logger.ts';
import { createProgress } from './progress-bars.ts';
import { runJob, type RunSummary } from '../pipeline/run-job.ts';
import { createWarehouse, describeConnectionError, type Warehouse } from '../warehouse/db.ts';
import { pendingMigrations } from '../warehouse/migrate.ts';
import { FatalError } from '../common/errors.ts';
import type { RunMetrics } from '../metrics/run-metrics.ts';
import { createSource } from './api-clients.ts';
export interface ExportOptions {
  databaseUrl: string;
  api: ApiEndpoint;
  logger: Logger;
  clock?: Clock;
  /** Show progress bars (a terminal) rather than log lines. */
  tty: boolean;
  /** Where the logger's readable lines go, so that progress bars can print them above themselves. */
  terminal?: TerminalLines;
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
  const source = createSource({
    api: options.api,
    logger,
    clock,
    warehouse,
    concurrency: job.concurrency,
    requestsPerSecond: job.requestsPerSecond,
    headerBatchSize: job.headerBatchSize,
  });
  try {
    await ensureMigrated(warehouse);
    return await runJob(
      {
        warehouse,
        source,
        endpoint: options.api,
        logger,
        clock,
        progress: createProgress({ tty: options.tty, logger, job: job.name, ...(options.terminal && { terminal: options.terminal }) }),
        ...(options.metrics && { metrics: options.metrics }),
      },
      job,
      command,
    );
  } finally {
    await source.close().catch(() => undefined);
    await warehouse.close().catch(() => undefined);
  }
}

/** Stops a command before it starts when the warehouse cannot be reached or is not migrated. */
export async function ensureMigrated(warehouse: Warehouse): Promise<void> {
  const pending = await pendingMigrations(warehouse).catch((err: unknown) => {
    throw describeConnectionError(err);
  });
  if (pending.length) {
    throw new FatalError(`The warehouse is not migrated (${pending.length} migration(s) pending: ${pending.join(', ')}). Run \`erc20-etl migrate\` first.`);
  }
}
