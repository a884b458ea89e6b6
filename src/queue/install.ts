import pg from 'pg';
import { runMigrations } from 'graphile-worker';
import type { Logger } from 'pino';
import { describeConnectionError } from '../warehouse/db.ts';
import { graphileLogger } from './graphile-logger.ts';

// graphile-worker's first install is not safe to run from two processes at once (the second can find the
// schema half made); the processes of this tool take turns.
const TAKE_TURN = `SELECT pg_advisory_lock(hashtextextended('erc20-etl queue install', 0))`;

/**
 * Creates or updates graphile-worker's schema (`graphile_worker`) in the warehouse: the queue that
 * `enqueue` fills and `worker` empties. Safe to run twice, and from several processes at once.
 */
export async function installQueue(databaseUrl: string, logger: Logger): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'erc20-etl' });
  try {
    await client.connect();
    await client.query(TAKE_TURN);
    await runMigrations({ connectionString: databaseUrl, logger: graphileLogger(logger) });
  } catch (err) {
    throw describeConnectionError(err);
  } finally {
    // the turn ends with the session
    await client.end().catch(() => undefined);
  }
}
