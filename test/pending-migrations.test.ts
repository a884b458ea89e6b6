import { Migrator } from 'kysely';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createWarehouse, type Warehouse } from '../src/warehouse/db.ts';
import { migrationsFrom, MIGRATIONS_DIR, pendingMigrations } from '../src/warehouse/migrate.ts';
import { freshDatabase, type FreshDatabase } from './helpers/database.ts';

/** The pending migrations as kysely's Migrator lists them: it imports every migration (for its `up` and `down`). */
async function migratorPending(warehouse: Warehouse): Promise<string[]> {
  const migrations = await new Migrator({ db: warehouse.db, provider: migrationsFrom(MIGRATIONS_DIR) }).getMigrations();
  return migrations.filter((m) => m.executedAt === undefined).map((m) => m.name);
}

describe('pending migrations', () => {
  const opened: { database: FreshDatabase; warehouse: Warehouse }[] = [];
  const open = async (label: string) => {
    const database = await freshDatabase(label);
    const warehouse = createWarehouse({ databaseUrl: database.url, logger: pino({ level: 'silent' }), maxConnections: 2 });
    opened.push({ database, warehouse });
    return warehouse;
  };
  afterAll(async () => {
    for (const { database, warehouse } of opened) {
      await warehouse.close();
      await database.drop();
    }
  });

  it('names every migration of the folder, in order, on a database never migrated, as the Migrator does', async () => {
    const warehouse = await open('pending_new');
    const pending = await pendingMigrations(warehouse);
    expect(pending[0]).toBe('0001_initial');
    expect(pending.length).toBeGreaterThanOrEqual(9);
    expect(pending).toEqual(await migratorPending(warehouse));
  });

  it('names only the migrations after the ones applied, and none once all are', async () => {
    const warehouse = await open('pending_partial');
    const migrator = new Migrator({ db: warehouse.db, provider: migrationsFrom(MIGRATIONS_DIR) });
    expect((await migrator.migrateTo('0003_open_blocks')).error).toBeUndefined();
    const pending = await pendingMigrations(warehouse);
    expect(pending[0]).toBe('0004_shared_rate_limits');
    expect(pending).toEqual(await migratorPending(warehouse));
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    expect(await pendingMigrations(warehouse)).toEqual([]);
  });
});
