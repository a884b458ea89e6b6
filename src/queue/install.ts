import pg from 'pg';
import { runMigrations } from 'graphile-worker';
import type { Logger } from 'pino';
import { FatalError } from '../common/errors.ts';
import { describeConnectionError } from '../warehouse/db.ts';
import { MIGRATE_LOCK } from '../warehouse/migrate.ts';
import { graphileLogger } from './graphile-logger.ts';

// graphile-worker's install is not safe beside another install, nor beside kysely's migrator, which reads
// the catalog while the install renames and drops its tables: it takes its turn under the migration lock.
const TAKE_TURN = 'SELECT pg_advisory_lock($1)';

/**
 * Creates or updates graphile-worker's schema (`graphile_worker`) in the warehouse: the queue that
 * `enqueue` fills and `worker` empties. Safe to run twice, and from several processes at once.
 */
export async function installQueue(databaseUrl: string, logger: Logger): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'erc20-etl' });
  try {
    await client.connect();
    await client.query(TAKE_TURN, [MIGRATE_LOCK]);
    await runMigrations({ connectionString: databaseUrl, logger: graphileLogger(logger) });
  } catch (err) {
    if ((err as { code?: string }).code === '42501') {
      throw new FatalError(
        'The task queue (schema graphile_worker) needs installing or updating, and the role of DATABASE_URL may not do it. Run `erc20-etl migrate` as the role that owns the warehouse, then grant the queue as README "Database privileges" shows.',
        { cause: err },
      );
    }
    throw describeConnectionError(err);
  } finally {
    // the turn ends with the session
    await client.end().catch(() => undefined);
  }
}
