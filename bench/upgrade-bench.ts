import type pg from 'pg';
import { Migrator } from 'kysely';
import { pino } from 'pino';
import { createWarehouse } from '../src/warehouse/db.ts';
import { migrationsFrom, MIGRATIONS_DIR } from '../src/warehouse/migrate.ts';
import { createEmptyBenchDatabase, withClient, type BenchPostgres } from './bench-database.ts';
import { checkpoint } from './copy-baseline.ts';
import type { Outcome } from './exporter-bench.ts';
import { runExporterProcess } from './exporter-process.ts';
import { clockTicksPerSecond } from './proc-stat.ts';
import {
  BEFORE_CHAINS,
  FILLED_TABLES,
  fillStatements,
  oldWarehouseSize,
  upgradeProblems,
  type FilledTable,
  type OldWarehouseSize,
  type UpgradeBenchResult,
  type UpgradeObservation,
  type UpgradeRun,
} from './upgrade-figures.ts';

/** The two upgrades: the rows' chain left to the warehouse (1: its runs recorded none), and named with `--chain-id`. */
const VARIANTS = [
  { args: [], chainId: 1 },
  { args: ['--chain-id', '8453'], chainId: 8453 },
] as const;

export interface UpgradeBenchOptions {
  postgres: BenchPostgres;
  transfers: number;
  runTimeoutMs: number;
  note(line: string): void;
}

/**
 * Issue 17's upgrade as a user meets it, once per variant: a fresh database at migration 0007 (the last before
 * chains) filled by SQL with `transfers` transfers, their headers, tokens, coverage and run (not timed; then VACUUM
 * ANALYZE and CHECKPOINT), then `erc20-etl migrate` (the compiled CLI) timed from spawn to exit, then a check that
 * every row is there, of the chain, with token_transfers keyed by chain. Each database is dropped after. The
 * part's figures, or why it failed; a variant that fails is reported and the other still runs.
 *
 * @example await measureUpgrade({ postgres, transfers: 1_000_000, runTimeoutMs: 1_200_000, note })
 * // → { ok: true, value: { size: { transfers: 1000000, blocks: 30304, … }, runs: [{ args: [], chainId: 1, result: { ok: true, value: { seconds: 2.9, … } } }, …] } }
 */
export async function measureUpgrade(o: UpgradeBenchOptions): Promise<Outcome<UpgradeBenchResult>> {
  try {
    const size = oldWarehouseSize(o.transfers);
    const server = await withClient(o.postgres.serverUrl, async (c) => ({
      version: (await c.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version,
      maintenanceWorkMem: (await c.query<{ maintenance_work_mem: string }>('SHOW maintenance_work_mem')).rows[0]!.maintenance_work_mem,
    }));
    const runs: UpgradeBenchResult['runs'] = [];
    for (const { args, chainId } of VARIANTS) {
      try {
        runs.push({ args: [...args], chainId, result: { ok: true, value: await upgradeOnce(o, size, [...args], chainId) } });
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        o.note(`upgrade, migrate ${args.join(' ')}: failed: ${error}`);
        runs.push({ args: [...args], chainId, result: { ok: false, error } });
      }
    }
    return { ok: true, value: { size, server, runs } };
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    o.note(`upgrade: failed: ${error}`);
    return { ok: false, error };
  }
}

async function upgradeOnce(o: UpgradeBenchOptions, size: OldWarehouseSize, args: string[], chainId: number): Promise<UpgradeRun> {
  const database = await createEmptyBenchDatabase(o.postgres.serverUrl, 'upgrade');
  try {
    await migrateBeforeChains(database.url);
    o.note(
      `upgrade: filling a warehouse at ${BEFORE_CHAINS} with ${size.transfers.toLocaleString('en-US')} transfers over ${size.blocks.toLocaleString('en-US')} blocks (not timed)`,
    );
    const filled = performance.now();
    const { rows, bytes: before } = await withClient(database.url, async (c) => {
      for (const statement of fillStatements(size)) await c.query(statement);
      await c.query('VACUUM ANALYZE');
      await checkpoint(c);
      return { rows: await rowCounts(c), bytes: await databaseBytes(c) };
    });
    const fillSeconds = (performance.now() - filled) / 1000;
    o.note(`upgrade: erc20-etl migrate ${args.join(' ')}`.trimEnd());
    const run = await runExporterProcess(
      ['migrate', ...args],
      { DATABASE_URL: database.url },
      { ticksPerSecond: clockTicksPerSecond() },
      { intervalMs: 100, timeoutMs: o.runTimeoutMs },
    );
    if (run.timedOut) throw new Error(`erc20-etl migrate ran past ${o.runTimeoutMs / 1000} s and was stopped`);
    if (run.code !== 0) throw new Error(`erc20-etl migrate exited with ${run.code}: ${run.stderrTail.slice(-500)}`);
    const observation = await withClient(database.url, async (c): Promise<UpgradeObservation & { bytes: number }> => {
      const after = {} as UpgradeObservation['after'];
      for (const table of FILLED_TABLES) {
        const { rows } = await c.query<{ rows: string; on_chain: string }>(`SELECT count(*) AS rows, count(*) FILTER (WHERE chain_id = $1) AS on_chain FROM ${table}`, [chainId]);
        after[table] = { rows: Number(rows[0]!.rows), onChain: Number(rows[0]!.on_chain) };
      }
      const key = await c.query<{ definition: string }>(
        "SELECT pg_get_constraintdef(oid) AS definition FROM pg_constraint WHERE conrelid = 'token_transfers'::regclass AND contype = 'p'",
      );
      return { before: rows, after, primaryKey: key.rows[0]?.definition, stdout: run.stdout, bytes: await databaseBytes(c) };
    });
    return {
      args,
      chainId,
      rows,
      databaseBytes: { before, after: observation.bytes },
      fillSeconds,
      seconds: run.wallSeconds,
      peakRssMb: run.peakRssMb,
      problems: upgradeProblems(observation, chainId),
    };
  } finally {
    await database.drop();
  }
}

/** Migrates the database at `url` to `BEFORE_CHAINS` with kysely's Migrator, as the version before chains left it. */
async function migrateBeforeChains(url: string): Promise<void> {
  const warehouse = createWarehouse({ databaseUrl: url, logger: pino({ level: 'silent' }), maxConnections: 2, applicationName: 'erc20-etl-bench' });
  try {
    const result = await new Migrator({ db: warehouse.db, provider: migrationsFrom(MIGRATIONS_DIR) }).migrateTo(BEFORE_CHAINS);
    if (result.error) throw result.error;
  } finally {
    await warehouse.close();
  }
}

async function rowCounts(c: pg.Client): Promise<Record<FilledTable, number>> {
  const counts = {} as Record<FilledTable, number>;
  for (const table of FILLED_TABLES) counts[table] = Number((await c.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);
  return counts;
}

async function databaseBytes(c: pg.Client): Promise<number> {
  return Number((await c.query<{ bytes: string }>('SELECT pg_database_size(current_database()) AS bytes')).rows[0]!.bytes);
}
