import { systemClock } from '../common/clock.ts';
import { createLogger } from '../common/logger.ts';
import { resolveSettings } from '../config/settings.ts';
import { installQueue } from '../queue/install.ts';
import { queueStatus } from '../queue/queue-status.ts';
import { trackQueue } from '../metrics/queue-metrics.ts';
import { runWorker } from '../queue/worker.ts';
import { createWarehouse } from '../warehouse/db.ts';
import { createSource, type RunSource } from './api-clients.ts';
import type { Logger } from '../common/logger.ts';
import type { Source } from '../source/source.ts';
import type { ConnectionFlags } from './connection-flags.ts';
import { ensureMigrated } from './exporter.ts';
import { withMetricsServed, type MetricsFlags } from './metrics-flags.ts';
import { workerSettings, type WorkerFlags } from './worker-flags.ts';

/** `erc20-etl worker`: runs queued chunk tasks with this process's own CHAIN_API_URL. */
export async function worker(flags: ConnectionFlags & MetricsFlags & WorkerFlags): Promise<void> {
  const options = await workerSettings(flags);
  // one URL for the builder jobs and the node jobs the queue holds: read as either (the whole path redacted)
  const settings = resolveSettings({ flags, env: process.env, needs: { database: true, api: true }, source: 'any' });
  const logger = createLogger();
  const api = settings.api!;
  await withMetricsServed(flags, logger, async (metrics) => {
    // per task: a lock connection, a page connection, header inserts and rate-limit turns
    const warehouse = createWarehouse({ databaseUrl: settings.databaseUrl!, logger, maxConnections: options.concurrency * 3 + 4 });
    try {
      await ensureMigrated(warehouse);
      await installQueue(settings.databaseUrl!, logger);
      if (metrics) trackQueue(metrics.registry, () => queueStatus(warehouse.db));
      await runWorker(
        {
          databaseUrl: settings.databaseUrl!,
          warehouse,
          logger,
          clock: systemClock,
          source: (job) => taskSource(createSource({ api, logger, clock: systemClock, warehouse, concurrency: 1, job, rpcTimeoutMs: options.rpcTimeoutMs }), logger),
          redact: (text) => api.redact(text),
          ...(metrics && { metrics }),
        },
        options,
      );
    } finally {
      await warehouse.close().catch(() => undefined);
    }
  });
}

/**
 * A queued task's source, which keeps the `eth_getLogs` range it learned when the task closes it: a task
 * reports no success of its own to the worker, and a learned range is one that answered whether or not the
 * task got to its end.
 */
function taskSource(source: RunSource, logger: Logger): Source {
  return {
    ...source,
    async close() {
      await source.saveLearned().catch((err: unknown) => logger.warn({ msg: 'could not keep the eth_getLogs range for the next run', err: (err as Error).message }));
      await source.close();
    },
  };
}
