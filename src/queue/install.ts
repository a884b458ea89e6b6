import { runMigrations } from 'graphile-worker';
import type { Logger } from 'pino';
import { describeConnectionError } from '../warehouse/db.ts';
import { graphileLogger } from './graphile-logger.ts';

/**
 * Creates or updates graphile-worker's schema (`graphile_worker`) in the warehouse: the queue that
 * `enqueue` fills and `worker` empties. Safe to run twice, and from several processes at once.
 */
export async function installQueue(databaseUrl: string, logger: Logger): Promise<void> {
  await runMigrations({ connectionString: databaseUrl, logger: graphileLogger(logger) }).catch((err: unknown) => {
    throw describeConnectionError(err);
  });
}
