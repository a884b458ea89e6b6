import { setMaxListeners } from 'node:events';
import type { TimeBudget } from '../common/time-budget.ts';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../common/clock.ts';
import type { JobConfig } from '../config/job-schema.ts';
import type { ApiEndpoint } from '../config/api-url.ts';
import type { TerminalLines } from '../common/logger.ts';
import { createProgress } from './progress-bars.ts';
import { runJob, type RunSummary } from '../pipeline/run-job.ts';
import { createWarehouse, describeConnectionError, type Warehouse } from '../warehouse/db.ts';
import { pendingMigrations } from '../warehouse/migrate.ts';
import { FatalError, InterruptedError } from '../common/errors.ts';
import type { RunMetrics } from '../metrics/run-metrics.ts';
import type { SkippedLogCounts } from '../source/source.ts';
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
  /** A node source's deadline for one JSON-RPC answer (`--rpc-timeout`); the source's default when unset. */
  rpcTimeoutMs?: number;
  /** Where the run's time goes (`--time-budget`): every stage times its part. */
  budget?: TimeBudget;
}

/** What a run did (`runJob`), with what its source skipped and learned. */
export interface ExportSummary extends RunSummary {
  /** Logs with the Transfer topic that are not ERC-20 transfers, per contract (a node source's; none for the builder API). */
  skippedLogs: ReadonlyMap<string, SkippedLogCounts>;
  /** The `eth_getLogs` range (blocks) a node source learned, kept for the job's next run from the same host. */
  logsRange?: number;
  /** Whether `logsRange` was stored for the next run (false: storing it failed, and a warning said why). */
  logsRangeKept?: boolean;
  /** A block limit the provider does not state that held at the end of the run, kept with `logsRange`. */
  logsBlockLimit?: number;
  /** A node source's `eth_getLogs` calls, those refused (for size, or unanswered in time) and asked again in smaller calls, and of those the ones unanswered in time. */
  logsCalls?: LogsCalls;
}

export interface LogsCalls {
  calls: number;
  refused: number;
  timedOut: number;
}

/**
 * Builds every part of a run from the settings (warehouse, HTTP client, API clients, progress), runs
 * the job, and closes what it opened. The one place where the stages meet their real dependencies.
 */
export async function exportJob(options: ExportOptions, job: Readonly<JobConfig>, command: 'run' | 'backfill'): Promise<ExportSummary> {
  const { logger } = options;
  const clock = options.clock ?? systemClock;
  const warehouse = createWarehouse({ databaseUrl: options.databaseUrl, logger, maxConnections: job.concurrency + 4 });
  const stop = stopOnSignals(logger, job.name);
  const source = createSource({
    api: options.api,
    logger,
    clock,
    warehouse,
    concurrency: job.concurrency,
    job,
    rpcTimeoutMs: options.rpcTimeoutMs,
    budget: options.budget,
    stop: stop.signal,
  });
  try {
    await ensureMigrated(warehouse);
    const summary = await runJob(
      {
        warehouse,
        source,
        endpoint: options.api,
        logger,
        clock,
        progress: await createProgress({ tty: options.tty, logger, job: job.name, ...(options.terminal && { terminal: options.terminal }) }),
        ...(options.metrics && { metrics: options.metrics }),
        ...(options.budget && { budget: options.budget }),
        stop: stop.signal,
      },
      job,
      command,
    );
    // the range that worked, for the next run of the job from this endpoint's host
    const kept = await source.saveLearned(summary.runId).then(
      () => true,
      (err: unknown) => {
        logger.warn({ msg: 'could not keep the eth_getLogs range for the next run', job: job.name, err: options.api.redact((err as Error).message) });
        return false;
      },
    );
    const logsRange = source.learnedRange();
    const limit = source.learnedBlockLimit();
    const logsBlockLimit = typeof limit === 'object' ? limit.blocks : undefined;
    const c = source.counters;
    const logsCalls = c.logsCalls ? { calls: c.logsCalls, refused: c.logsRefused ?? 0, timedOut: c.logsTimedOut ?? 0 } : undefined;
    return {
      ...summary,
      skippedLogs: source.skippedLogs(),
      ...(logsRange !== undefined && { logsRange, logsRangeKept: kept, ...(logsBlockLimit !== undefined && { logsBlockLimit }) }),
      ...(logsCalls && { logsCalls }),
    };
  } finally {
    stop.release();
    await source.close().catch(() => undefined);
    await warehouse.close().catch(() => undefined);
  }
}

/**
 * SIGINT and SIGTERM while a run works: the first asks it to stop after each chunk's current page (the run then
 * fails, its ledger saying so); a second one ends the process at once, as it would without this.
 */
function stopOnSignals(logger: Logger, job: string): { signal: AbortSignal; release(): void } {
  const stop = new AbortController();
  // every request in flight listens to it (as many as the HTTP pool's connections), each removed as its request ends
  setMaxListeners(0, stop.signal);
  const release = () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  const onSignal = (signal: 'SIGINT' | 'SIGTERM') => {
    release();
    logger.warn({ msg: `${signal}: stopping after the current pages (again to stop at once)`, job });
    stop.abort(new InterruptedError(signal));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return { signal: stop.signal, release };
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
