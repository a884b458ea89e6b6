import { runMigrations } from 'graphile-worker';
import type { Logger } from 'pino';
import { FatalError } from '../common/errors.ts';
import { describeConnectionError } from '../warehouse/db.ts';
import { inMigrationTurn } from '../warehouse/migrate.ts';
import { lacksPrivilege } from '../warehouse/pg-errors.ts';
import { graphileLogger } from './graphile-logger.ts';

/**
 * Creates or updates graphile-worker's schema (`graphile_worker`) in the warehouse: the queue that
 * `enqueue` fills and `worker` empties. Safe to run twice, and from several processes at once: it takes
 * its turn with other installs and with `erc20-etl migrate`.
 */
export async function installQueue(databaseUrl: string, logger: Logger): Promise<void> {
  try {
    await inMigrationTurn(databaseUrl, () => runMigrations({ connectionString: databaseUrl, logger: graphileLogger(logger) }));
  } catch (err) {
    if (lacksPrivilege(err)) {
      throw new FatalError(
        'The task queue (schema graphile_worker) needs installing or updating, and the role of DATABASE_URL may not do it. Run `erc20-etl migrate` as the role that owns the warehouse, then grant the queue as README "Database privileges" shows.',
        { cause: err },
      );
    }
    throw describeConnectionError(err);
  }
}
