import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { FileMigrationProvider, Migrator, sql, type Kysely, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely';
import { ConfigError, FatalError } from '../common/errors.ts';
import type { Warehouse } from './db.ts';
import { MIGRATE_LOCK } from './lock-keys.ts';

/**
 * `migrations/` beside this code: the `.ts` files when it runs from the sources (vitest, tsx), the compiled
 * `.js` ones when it runs from `dist/` (dist/src/warehouse → dist/migrations).
 */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations', import.meta.url));

/**
 * Every migration file of DIR (`NNNN_name.ts` or `.js`), named without its extension (`0001_initial`), with
 * kysely's FileMigrationProvider. It imports what `join` gives it: a file URL here, so that a folder whose path
 * holds `#`, `%` or `?` still imports (a plain path would be read as a URL and cut there).
 */
export function migrationsFrom(dir: string, options: MigrateOptions = {}): MigrationProvider {
  const join = (...parts: string[]) => pathToFileURL(path.join(...parts)).href;
  const files = new FileMigrationProvider({ fs, path: { join }, migrationFolder: dir });
  return {
    async getMigrations() {
      const migrations = await files.getMigrations();
      // each `up` is handed what the command was told (a migration that needs none ignores it)
      return Object.fromEntries(Object.entries(migrations).map(([name, m]): [string, Migration] => [name, { ...m, up: (db) => (m.up as WithOptions)(db, options) }]));
    },
  };
}

/** What `erc20-etl migrate` tells the migrations. */
export interface MigrateOptions {
  /** The chain of the rows a warehouse holds from before chains (`migrate --chain-id`; migration 0009). */
  chainId?: number | undefined;
}

type WithOptions = (db: Kysely<unknown>, options: MigrateOptions) => Promise<void>;

/**
 * Applies the pending migrations with kysely's Migrator, each in its own transaction. Safe to run twice
 * (applied ones are skipped) and concurrently (an advisory lock makes runs take turns).
 *
 * @example await migrateToLatest(warehouse) // → { applied: ['0001_initial'], alreadyApplied: 0 }
 */
export async function migrateToLatest(warehouse: Warehouse, dir = MIGRATIONS_DIR, options: MigrateOptions = {}): Promise<{ applied: string[]; alreadyApplied: number }> {
  const client = await warehouse.pool.connect();
  const onError = () => undefined; // a dropped connection surfaces as the migration's own error
  client.on('error', onError);
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATE_LOCK]);
    const migrator = new Migrator({ db: warehouse.db, provider: migrationsFrom(dir, options) });
    const before = (await migrator.getMigrations()).filter((m) => m.executedAt !== undefined).length;
    const result: MigrationResultSet = await migrator.migrateToLatest();
    if (result.error) {
      const failed = result.results?.find((r) => r.status === 'Error')?.migrationName;
      const what = failed ? `Migration ${failed} failed` : 'Migrating failed';
      // a migration that refuses what the warehouse holds says itself what to do
      if ((result.error as Error).name === 'MigrationRefusal') throw new ConfigError(`${what}: ${(result.error as Error).message}. Nothing of it was applied.`);
      throw new FatalError(
        `${what}: ${(result.error as Error).message}. Nothing of it was applied; fix the cause (e.g. run it as the role that owns the tables) and run \`erc20-etl migrate\` again.`,
        { cause: result.error },
      );
    }
    return { applied: (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName), alreadyApplied: before };
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATE_LOCK]).catch(() => undefined);
    client.removeListener('error', onError);
    client.release();
  }
}

/**
 * The migrations the warehouse has not applied, by name, in order: every migration file of DIR (named as
 * kysely's FileMigrationProvider names them) without a row in `kysely_migration`. The commands that read or
 * write data check it first, and nothing is imported for it: importing the migrations would load kysely's
 * own files (some 260 of them) beside the bundle's copy, for names the folder already gives. A file is taken for a
 * migration by its name alone (kysely's provider would also drop one without an `up`; every migration has one).
 */
export async function pendingMigrations(warehouse: Warehouse, dir = MIGRATIONS_DIR): Promise<string[]> {
  const names = migrationNames(await fs.readdir(dir));
  const exists = await sql<{ ok: boolean }>`SELECT to_regclass('kysely_migration') IS NOT NULL AS ok`.execute(warehouse.db);
  if (!exists.rows[0]?.ok) return names;
  const applied = await sql<{ name: string }>`SELECT name FROM kysely_migration`.execute(warehouse.db);
  const done = new Set(applied.rows.map((r) => r.name));
  return names.filter((name) => !done.has(name));
}

/**
 * The migrations among a folder's files, by name in order: `.js`, `.mjs`, `.ts` and `.mts` files other than
 * declarations, without their extension, each name once, as kysely's FileMigrationProvider (and so the Migrator)
 * names them.
 *
 * @example migrationNames(['0002_b.js', '0001_a.js', '0001_a.d.ts', 'README.md']) // → ['0001_a', '0002_b']
 */
export function migrationNames(files: readonly string[]): string[] {
  const isMigration = (f: string) => /\.(?:js|mjs)$/.test(f) || (/\.(?:ts|mts)$/.test(f) && !/\.d\.(?:ts|mts)$/.test(f));
  // a migration beside its compiled twin (`0001_a.ts`, `0001_a.js`) is one migration, as kysely keys them by name
  return [...new Set(files.filter(isMigration).map((f) => f.slice(0, f.lastIndexOf('.'))))].sort();
}

/**
 * Runs `work` in the migrations' turn, held on a connection of its own to `databaseUrl` until `work` ends: for
 * an install that opens its own connections (graphile-worker's), which is not safe beside another install, nor
 * beside kysely's migrator reading the catalog while the install renames and drops its tables.
 *
 * @example await inMigrationTurn(databaseUrl, () => runMigrations({ connectionString: databaseUrl }));
 */
export async function inMigrationTurn<T>(databaseUrl: string, work: () => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'erc20-etl' });
  // a connection that fails while `work` runs (PostgreSQL restarting) fails `work`'s own statements; here it is only
  // the turn's session, and must not end the process as an unhandled 'error' event
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATE_LOCK]);
    return await work();
  } finally {
    // the turn ends with the session
    await client.end().catch(() => undefined);
  }
}
