import { createLogger } from '../common/logger.ts';
import { resolveSettings } from '../config/settings.ts';
import { createWarehouse, describeConnectionError } from '../warehouse/db.ts';
import { migrateToLatest } from '../warehouse/migrate.ts';
import type { ConnectionFlags } from './connection-flags.ts';
import { installQueue } from '../queue/install.ts';

/**
 * `erc20-etl migrate`: applies the pending migrations and says what it did, then creates or updates the
 * queue's schema (graphile-worker's), so the roles that run workers need no CREATE privilege.
 *
 * @example await migrate({}) // stdout: "erc20-etl migrate: applied 0001_initial"
 */
export async function migrate(flags: ConnectionFlags): Promise<void> {
  const settings = resolveSettings({ flags, env: process.env, needs: { database: true, api: false } });
  const logger = createLogger();
  const warehouse = createWarehouse({ databaseUrl: settings.databaseUrl!, logger, maxConnections: 2 });
  try {
    const result = await migrateToLatest(warehouse).catch((err: unknown) => {
      throw describeConnectionError(err);
    });
    process.stdout.write(
      result.applied.length
        ? `erc20-etl migrate: applied ${result.applied.join(', ')}\n`
        : `erc20-etl migrate: up to date (${result.alreadyApplied} migration(s) applied before)\n`,
    );
    await installQueue(settings.databaseUrl!, logger);
    process.stdout.write('erc20-etl migrate: the task queue (schema graphile_worker) is ready\n');
  } finally {
    await warehouse.close();
  }
}
