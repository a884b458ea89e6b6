import { createLogger } from '../common/logger.ts';
import { checkAll } from '../config/check-all.ts';
import { resolveSettings } from '../config/settings.ts';
import { createWarehouse, describeConnectionError } from '../warehouse/db.ts';
import { migrateToLatest, pendingMigrations } from '../warehouse/migrate.ts';
import { chainsHeld } from '../warehouse/status.ts';
import { chainIdFlag } from '../config/load-job.ts';
import type { ConnectionFlags } from './connection-flags.ts';
import { installQueue } from '../queue/install.ts';
import { rebuildDeferredIndexes } from '../warehouse/deferred-indexes.ts';
import { WAITING } from '../pipeline/lookup-indexes.ts';

/** The migration that keys every table by chain: `--chain-id` names the chain of the rows it finds. */
const CHAIN_KEYS = '0009_chain_keys';

/**
 * `erc20-etl migrate [--chain-id N]`: applies the pending migrations and says what it did, then creates or updates the
 * queue's schema (graphile-worker's), so the roles that run workers need no CREATE privilege. `--chain-id` names the
 * chain of the rows a warehouse written before chains holds (default: the chain its runs recorded, else 1).
 *
 * @example await migrate({}) // stdout: "erc20-etl migrate: applied 0001_initial"
 */
export async function migrate(flags: ConnectionFlags & { chainId?: string }): Promise<void> {
  const [chainId, settings] = await checkAll([
    () => (flags.chainId === undefined ? undefined : chainIdFlag(flags.chainId, '--chain-id')),
    () => resolveSettings({ flags, env: process.env, needs: { database: true, api: false } }),
  ]);
  const logger = createLogger();
  const warehouse = createWarehouse({ databaseUrl: settings.databaseUrl!, logger, maxConnections: 2 });
  try {
    const result = await (async () => {
      const pending = await pendingMigrations(warehouse);
      if (chainId !== undefined && !pending.includes(CHAIN_KEYS)) {
        logger.warn({ msg: '--chain-id changes nothing: this warehouse is keyed by chain already, and each row keeps its chain', chainId });
      }
      return migrateToLatest(warehouse, undefined, { chainId });
    })().catch((err: unknown) => {
      throw describeConnectionError(err);
    });
    process.stdout.write(
      result.applied.length
        ? `erc20-etl migrate: applied ${result.applied.join(', ')}\n`
        : `erc20-etl migrate: up to date (${result.alreadyApplied} migration(s) applied before)\n`,
    );
    // an upgrade files what was there under one chain: say which, and on what grounds
    if (result.applied.includes(CHAIN_KEYS) && result.alreadyApplied > 0) {
      const held = await chainsHeld(warehouse.db);
      if (held.length) {
        const why =
          chainId !== undefined
            ? 'as --chain-id says'
            : "the chain its runs checked with the endpoint's eth_chainId, else 1. They stay so: rows of another chain are exported again as its own, by a job of another name; a copy of the warehouse before this migration upgrades with --chain-id N";
        process.stdout.write(`erc20-etl migrate: the rows written before chains are chain ${held.join(', ')}'s (${why})\n`);
      }
    }
    // lookup indexes a first load dropped (one that was stopped, or one still going: it goes on with them): the owner builds them now
    const { built, resumed } = await rebuildDeferredIndexes(warehouse.db, { onWait: () => process.stdout.write(`erc20-etl migrate: ${WAITING}\n`) });
    if (built.length) process.stdout.write(`erc20-etl migrate: built the lookup indexes a first load had dropped: ${built.join(', ')}\n`);
    if (resumed) process.stdout.write('erc20-etl migrate: resumed autovacuum on token_transfers, which a first load had paused\n');
    await installQueue(settings.databaseUrl!, logger);
    process.stdout.write('erc20-etl migrate: the task queue (schema graphile_worker) is ready\n');
  } finally {
    await warehouse.close();
  }
}
