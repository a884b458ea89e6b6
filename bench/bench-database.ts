import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { createWarehouse } from '../src/warehouse/db.ts';
import { startEmbeddedPostgres } from '../src/local-postgres/embedded-postgres.ts';
import { localStateDir } from '../src/local-postgres/state-dir.ts';
import { migrateToLatest } from '../src/warehouse/migrate.ts';
import { REPO_DIR } from './devnet-process.ts';

export interface BenchPostgres {
  /** URL of the server's maintenance database, where the bench creates and drops its databases. */
  serverUrl: string;
  /** Where it comes from: `DATABASE_URL`/`--database-url`, or the embedded server in `bench-pg` of the local state folder (`.data`; see `localStateDir`). */
  source: 'database-url' | 'embedded';
  /** `SHOW server_version`, e.g. `18.0`. */
  version: string;
  /**
   * With `statements` on the embedded server: the plans auto_explain logged for statements slower than
   * 5 s since the last call (each plan's lines joined by newlines). Empty otherwise.
   */
  takeSlowPlans(): string[];
  stop(): Promise<void>;
}

export interface BenchDatabase {
  url: string;
  name: string;
  /** Ends every session on it and drops it. Safe to call twice. */
  drop(): Promise<void>;
}

/**
 * The PostgreSQL server of the bench: the one at `databaseUrl` when given (its databases are left alone;
 * the bench only creates and drops its own `bench_*` ones), else an embedded one with its data in
 * `bench-pg` of the project's local state folder (started now, stopped by `stop()`), with `max_wal_size` set when given, and
 * pg_stat_statements loaded when `statements`.
 *
 * @example const server = await benchPostgres(process.env.DATABASE_URL); // … await server.stop();
 */
export async function benchPostgres(databaseUrl: string | undefined, options: { statements?: boolean; maxWalSize?: string } = {}): Promise<BenchPostgres> {
  if (databaseUrl) {
    const version = await serverVersion(databaseUrl);
    return { serverUrl: databaseUrl, source: 'database-url', version, takeSlowPlans: () => [], stop: async () => undefined };
  }
  const plans = createPlanCollector();
  const stateDir = await localStateDir(REPO_DIR);
  const embedded = await startEmbeddedPostgres({
    dataDir: join(stateDir, 'bench-pg'),
    stateDir,
    settings: {
      // a bulk load's setting: checkpoints (and the full-page images after each) come every max_wal_size of WAL
      ...(options.maxWalSize && { max_wal_size: options.maxWalSize }),
      ...(options.statements && {
        shared_preload_libraries: 'pg_stat_statements,auto_explain',
        'pg_stat_statements.track_utility': 'on',
        'auto_explain.log_min_duration': '5s',
      }),
    },
    ...(options.statements && {
      logger: pino({ level: 'debug' }, { write: (json: string) => plans.line((JSON.parse(json) as { line?: string }).line) }),
    }),
  });
  try {
    return { serverUrl: embedded.url, source: 'embedded', version: await serverVersion(embedded.url), takeSlowPlans: plans.take, stop: embedded.stop };
  } catch (err) {
    await embedded.stop();
    throw err;
  }
}

/**
 * Creates an empty database `bench_<label>_<random>` (UTF8, C collation) and migrates it to the latest schema.
 *
 * @example const db = await createBenchDatabase(server.serverUrl, 'dense'); // db.url ends in /bench_dense_5f1c9a0b
 */
export async function createBenchDatabase(serverUrl: string, label: string): Promise<BenchDatabase> {
  const database = await createEmptyBenchDatabase(serverUrl, label);
  const warehouse = createWarehouse({ databaseUrl: database.url, logger: pino({ level: 'silent' }), maxConnections: 2, applicationName: 'erc20-etl-bench' });
  try {
    await migrateToLatest(warehouse);
  } catch (err) {
    await warehouse.close();
    await database.drop();
    throw err;
  }
  await warehouse.close();
  return database;
}

/**
 * Creates an empty database `bench_<label>_<random>` (UTF8, C collation), not migrated: for a part that
 * migrates it itself (to an older schema, say).
 *
 * @example const db = await createEmptyBenchDatabase(server.serverUrl, 'upgrade'); // db.url ends in /bench_upgrade_5f1c9a0b
 */
export async function createEmptyBenchDatabase(serverUrl: string, label: string): Promise<BenchDatabase> {
  const name = `bench_${label.replace(/[^a-z0-9]+/g, '_')}_${randomBytes(4).toString('hex')}`;
  await withClient(serverUrl, (c) => c.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  let dropped: Promise<void> | undefined;
  const database: BenchDatabase = {
    url: url.toString(),
    name,
    drop: () => (dropped ??= withClient(serverUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined)),
  };
  return database;
}

/** Runs `work` with a client of `url`, connected with the application name `erc20-etl-bench`. */
export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: 'erc20-etl-bench' });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Gathers auto_explain's plans from the server's output lines: a plan starts at a `duration: … plan:` line and
 * runs until the next line with a log prefix (`2025-… UTC [pid] LEVEL:`).
 */
function createPlanCollector() {
  const plans: string[][] = [];
  let current: string[] | undefined;
  return {
    line(text: string | undefined) {
      if (text === undefined) return;
      if (/^\d{4}-\d\d-\d\d .*\b[A-Z]+:\s/.test(text)) {
        current = /duration: .* plan:/.test(text) ? [text] : undefined;
        if (current) plans.push(current);
      } else current?.push(text);
    },
    take: () => plans.splice(0).map((lines) => lines.join('\n')),
  };
}

async function serverVersion(url: string): Promise<string> {
  return withClient(url, async (c) => (await c.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version);
}
