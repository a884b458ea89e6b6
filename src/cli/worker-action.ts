import { systemClock } from '../common/clock.ts';
import { FatalError } from '../common/errors.ts';
import { createLogger } from '../common/logger.ts';
import { checkAll } from '../config/check-all.ts';
import { resolveSettings } from '../config/settings.ts';
import { installQueue } from '../queue/install.ts';
import { queueStatus } from '../queue/queue-status.ts';
import { trackQueue } from '../metrics/queue-metrics.ts';
import { runWorker } from '../queue/worker.ts';
import { createWarehouse } from '../warehouse/db.ts';
import { createSource, type RunSource } from './api-clients.ts';
import type { Logger } from '../common/logger.ts';
import { extendSource, type Source } from '../source/source.ts';
import type { ConnectionFlags } from './connection-flags.ts';
import { ensureMigrated } from './exporter.ts';
import { checkMetricsFlags, withMetricsServed, type MetricsFlags } from './metrics-flags.ts';
import { workerSettings, type WorkerFlags } from './worker-flags.ts';

/** `erc20-etl worker`: runs queued chunk tasks with this process's own CHAIN_API_URL. */
export async function worker(flags: ConnectionFlags & MetricsFlags & WorkerFlags): Promise<void> {
  const [options, settings] = await checkAll([
    () => workerSettings(flags),
    // one URL for the builder jobs and the node jobs the queue holds: read as either (the whole path redacted)
    () => resolveSettings({ flags, env: process.env, needs: { database: true, api: true }, source: 'any' }),
    () => checkMetricsFlags(flags),
  ]);
  const logger = createLogger();
  const api = settings.api!;
  await withMetricsServed(flags, logger, async (metrics) => {
    // per task: a lock connection, a page connection, header inserts and rate-limit turns
    const warehouse = createWarehouse({ databaseUrl: settings.databaseUrl!, logger, maxConnections: options.concurrency * 3 + 4 });
    try {
      await ensureMigrated(warehouse);
      await installQueue(settings.databaseUrl!, logger);
      if (metrics) trackQueue(metrics.registry, () => queueStatus(warehouse.db));
      const chainId = await endpointChain(createSource({ api, logger, clock: systemClock, warehouse, concurrency: 1, job: { name: 'worker', headerBatchSize: 1 } }), (text) =>
        api.redact(text),
      );
      await runWorker(
        {
          databaseUrl: settings.databaseUrl!,
          chainId,
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
 * The chain the worker's endpoint serves (`eth_chainId`): the worker takes that chain's tasks only. An endpoint that
 * cannot say stops the worker before it takes any task.
 */
async function endpointChain(source: RunSource, redact: (text: string) => string): Promise<number> {
  let served: number | bigint;
  try {
    served = await source.chainId();
  } catch (err) {
    throw new FatalError(
      `The worker could not ask CHAIN_API_URL which chain it serves (eth_chainId): ${redact((err as Error).message)}. A worker takes the queued tasks of its endpoint's chain: check the URL, then start it again.`,
      { cause: err },
    );
  } finally {
    await source.close().catch(() => undefined);
  }
  if (typeof served === 'bigint') throw new FatalError(`CHAIN_API_URL serves chain ${served}, beyond the chain ids a job can name (at most 2^53 − 1).`);
  return served;
}

/**
 * A queued task's source, which keeps the `eth_getLogs` range it learned when the task closes it: a task
 * reports no success of its own to the worker, and a learned range is one that answered whether or not the
 * task got to its end.
 */
function taskSource(source: RunSource, logger: Logger): Source {
  return extendSource(source, {
    async close() {
      await source.saveLearned().catch((err: unknown) => logger.warn({ msg: 'could not keep the eth_getLogs range for the next run', err: (err as Error).message }));
      await source.close();
    },
  });
}
