import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Migrator, sql } from 'kysely';
import copyStreams from 'pg-copy-streams';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import { createWarehouse, type Warehouse } from '../src/warehouse/db.ts';
import { migrationsFrom, MIGRATIONS_DIR } from '../src/warehouse/migrate.ts';
import { contractsOf } from './helpers/chaos.ts';
import { runCli } from './helpers/cli.ts';
import { freshDatabase, type FreshDatabase } from './helpers/database.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { job, migratedWarehouse, runExport } from './helpers/exporter.ts';

/**
 * Issue 17's upgrade: a warehouse written before tables were keyed by chain becomes one chain's, every row and
 * ledger kept. The old warehouse holds what the exporter writes (a finished run of two contracts, its headers,
 * tokens, coverage and run ledger, and rows a reconciliation archived) in the schema of migration 0007 or 0008,
 * copied column for column from a warehouse the exporter filled.
 */

const OPTIONS = { seed: 173, blocks: 200, tokens: 2, transfers: 800, startBlock: 4_000 };
const TABLES = [
  'export_runs',
  'token_transfers',
  'token_transfers_removed',
  'block_headers',
  'tokens',
  'export_coverage',
  'export_ranges',
  'export_chunks',
  'export_missing',
] as const;

/** The tables of chain data proper (the others are ledgers, which a run adds to). */
const DATA = ['token_transfers', 'token_transfers_removed', 'block_headers', 'tokens'] as const;

let devnet: RunningDevnet;
/** The same chain served as chain 8453's. */
let base: RunningDevnet;
let source: Awaited<ReturnType<typeof migratedWarehouse>>;
const contracts = () => contractsOf(generateSyntheticDataset(OPTIONS));
const chainJob = (chain: number) =>
  job(
    'upgraded',
    contracts().map((address) => ({ address, fromBlock: OPTIONS.startBlock, toBlock: OPTIONS.startBlock + OPTIONS.blocks - 1 })),
    { chain },
  );

beforeAll(async () => {
  devnet = await startDevnet(generateSyntheticDataset(OPTIONS));
  base = await startDevnet(generateSyntheticDataset(OPTIONS), { chainId: 8453 });
  source = await migratedWarehouse('chain_upgrade_source');
  await runExport(source.url, devnet.base, chainJob(1));
  // a row the chain no longer serves, archived by the next run: the removed table has a row too
  const [phantom] = (await source.warehouse.db.selectFrom('token_transfers').selectAll().limit(1).execute()).map((r) => ({ ...r, log_index: 9_999 }));
  await source.warehouse.db.insertInto('token_transfers').values(phantom!).execute();
  await runExport(source.url, devnet.base, chainJob(1));
}, 60_000);
afterAll(async () => {
  await source?.drop();
  await devnet?.close();
  await base?.close();
});

/** Every row of the chain-data tables (`tables`), as text without chain_id, in a stable order: what an upgrade must keep. */
async function contents(warehouse: Warehouse, tables: readonly string[] = TABLES): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of tables) {
    const columns = await oldColumns(warehouse, table);
    const { rows } = await sql<{ line: string }>`
      SELECT concat_ws('|', ${sql.join(columns.map((c) => sql.ref(c)))}) AS line FROM ${sql.table(table)} ORDER BY 1`.execute(warehouse.db);
    out[table] = rows.map((r) => r.line);
  }
  return out;
}

/** A table's columns, without those migration 0009 added (`all`: every one it has). */
async function oldColumns(warehouse: Warehouse, table: string, which: 'before chains' | 'all' = 'before chains'): Promise<string[]> {
  const { rows } = await sql<{ column_name: string }>`
    SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ${table}
    ORDER BY ordinal_position`.execute(warehouse.db);
  return rows.map((r) => r.column_name).filter((c) => which === 'all' || (c !== 'chain_id' && c !== 'unverified_reason'));
}

/** A database at `version`, holding the source warehouse's rows in that version's columns. */
async function oldWarehouse(label: string, version: '0007_node_source' | '0008_run_chain'): Promise<{ database: FreshDatabase; warehouse: Warehouse }> {
  const database = await freshDatabase(label);
  const warehouse = createWarehouse({ databaseUrl: database.url, logger: pino({ level: 'silent' }), maxConnections: 2 });
  const migrated = await new Migrator({ db: warehouse.db, provider: migrationsFrom(MIGRATIONS_DIR) }).migrateTo(version);
  expect(migrated.error).toBeUndefined();
  const from = await source.warehouse.pool.connect();
  const to = await warehouse.pool.connect();
  try {
    for (const table of TABLES) {
      const columns = (await oldColumns(warehouse, table, 'all')).join(', ');
      const out = from.query(copyStreams.to(`COPY (SELECT ${columns} FROM ${table}) TO STDOUT`));
      await pipeline(out as unknown as Readable, to.query(copyStreams.from(`COPY ${table} (${columns}) FROM STDIN`)));
    }
    // bigserial ids go on after the copied ones, as they would have
    for (const table of ['export_runs', 'token_transfers_removed', 'export_coverage', 'export_ranges', 'export_chunks']) {
      await to.query(`SELECT setval(pg_get_serial_sequence('${table}', 'id'), coalesce((SELECT max(id) FROM ${table}), 0) + 1, false)`);
    }
  } finally {
    from.release();
    to.release();
  }
  return { database, warehouse };
}

const migrate = (url: string, extra: string[] = []) => runCli(['migrate', ...extra], { env: { DATABASE_URL: url } });

/** What each table's chain_id says after the upgrade: `chain` where the table holds rows. */
function expectedChains(before: Record<string, string[]>, chain: string): Record<string, string[]> {
  return Object.fromEntries(TABLES.map((t) => [t, before[t]!.length ? [chain] : []]));
}

async function applied(warehouse: Warehouse): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(warehouse.db);
  return rows.map((r) => r.name);
}

async function chainsOf(warehouse: Warehouse): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of TABLES) {
    const { rows } = await sql<{ chain_id: string }>`SELECT DISTINCT chain_id::text FROM ${sql.table(table)} ORDER BY 1`.execute(warehouse.db);
    out[table] = rows.map((r) => r.chain_id);
  }
  return out;
}

describe('upgrading a warehouse written before chains', () => {
  it('keeps every row and ledger as chain 1, and the next run of the job rewrites nothing', async () => {
    const before = await contents(source.warehouse);
    expect(before.token_transfers!.length).toBeGreaterThan(500);
    expect(before.token_transfers_removed).toHaveLength(1);
    const { database, warehouse } = await oldWarehouse('chain_upgrade_0007', '0007_node_source');
    try {
      const r = await migrate(database.url);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/applied 0008_run_chain, 0009_chain_keys/);
      expect(r.stdout).toMatch(/the rows written before chains are chain 1's \(the chain its runs checked/);
      expect(await contents(warehouse)).toEqual(before);
      expect(await chainsOf(warehouse)).toEqual(expectedChains(before, '1'));
      const keys = await sql<{ table_name: string; key: string }>`
        SELECT c.conrelid::regclass::text AS table_name, pg_get_constraintdef(c.oid) AS key FROM pg_constraint c
        WHERE c.contype = 'p' AND c.conrelid::regclass::text IN ('token_transfers', 'block_headers', 'tokens') ORDER BY 1`.execute(warehouse.db);
      expect(keys.rows).toEqual([
        { table_name: 'block_headers', key: 'PRIMARY KEY (hash, chain_id)' },
        { table_name: 'token_transfers', key: 'PRIMARY KEY (transaction_hash, log_index, chain_id)' },
        { table_name: 'tokens', key: 'PRIMARY KEY (contract_address, chain_id)' },
      ]);
      // the rows are chain 1's: the job's re-run there finds every row and header as it is, and writes none
      const again = await runExport(database.url, devnet.base, chainJob(1));
      expect(again.totals).toMatchObject({ rowsInserted: 0, rowsUpdated: 0, rowsRemoved: 0, headersFetched: 0 });
      expect(await contents(warehouse, DATA)).toEqual(await contents(source.warehouse, DATA));
    } finally {
      await warehouse.close();
      await database.drop();
    }
  }, 60_000);

  it('resumes a range a run left open before chains, as the chain its rows were filed under', async () => {
    const { database, warehouse } = await oldWarehouse('chain_upgrade_open', '0007_node_source');
    try {
      // as the version before left it: a run stopped part-way through a range, whose chunk's blocks lost rows since
      const [contract] = contracts();
      const from = OPTIONS.startBlock + 100;
      const to = OPTIONS.startBlock + OPTIONS.blocks - 1;
      const run = await sql<{ id: string }>`SELECT max(id)::text AS id FROM export_runs`.execute(warehouse.db);
      const range = await sql<{ id: string }>`
        INSERT INTO export_ranges (job, contract_address, from_block, to_block, created_by_run)
        VALUES ('upgraded', ${contract}, ${from}, ${to}, ${run.rows[0]!.id}) RETURNING id`.execute(warehouse.db);
      await sql`INSERT INTO export_chunks (range_id, from_block, to_block) VALUES (${range.rows[0]!.id}, ${from}, ${to})`.execute(warehouse.db);
      const lost = await sql<{ n: string }>`
        WITH gone AS (DELETE FROM token_transfers WHERE contract_address = ${contract} AND block_number >= ${from + 50} RETURNING 1)
        SELECT count(*)::text AS n FROM gone`.execute(warehouse.db);
      expect(Number(lost.rows[0]!.n)).toBeGreaterThan(0);

      const r = await migrate(database.url, ['--chain-id', '8453']);
      expect(r.code, r.stderr).toBe(0);
      const open = await sql<{ chain_id: string; status: string }>`SELECT chain_id::text, status FROM export_ranges WHERE id = ${range.rows[0]!.id}`.execute(warehouse.db);
      expect(open.rows).toEqual([{ chain_id: '8453', status: 'open' }]);
      // the job's next run on chain 8453 resumes it first, reads its chunk back in, and closes it
      const again = await runExport(database.url, base.base, chainJob(8453));
      expect(again.totals.rowsInserted).toBe(Number(lost.rows[0]!.n));
      const after = await sql<{ status: string }>`SELECT status FROM export_ranges WHERE id = ${range.rows[0]!.id}`.execute(warehouse.db);
      expect(after.rows).toEqual([{ status: 'complete' }]);
      // every transfer is back as the chain has it (those read again by this run say so in their provenance)
      const transfers = (w: Warehouse) =>
        sql<{ line: string }>`
          SELECT concat_ws('|', transaction_hash, log_index, contract_address, from_address, to_address, value, block_number, block_hash, block_timestamp, transaction_index) AS line
          FROM token_transfers ORDER BY 1`
          .execute(w.db)
          .then((q) => q.rows.map((x) => x.line));
      expect(await transfers(warehouse)).toEqual(await transfers(source.warehouse));
    } finally {
      await warehouse.close();
      await database.drop();
    }
  }, 60_000);

  it('files the rows under the chain `migrate --chain-id` names, and refuses one its runs contradict', async () => {
    const before = await contents(source.warehouse);
    const { database, warehouse } = await oldWarehouse('chain_upgrade_8453', '0008_run_chain');
    try {
      // runs of the interim version (since 0008) checked the endpoint's eth_chainId: chain 1 contradicts --chain-id 8453,
      // and nothing is applied
      const [last] = await sql<{ id: string; started_at: string }>`SELECT id, started_at::text FROM export_runs ORDER BY id DESC LIMIT 1`.execute(warehouse.db).then((r) => r.rows);
      await sql`UPDATE export_runs SET started_at = now() WHERE id = ${last!.id}`.execute(warehouse.db);
      const refused = await migrate(database.url, ['--chain-id', '8453']);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(
        /--chain-id 8453 says this warehouse's rows are chain 8453's, but its runs checked the endpoint's eth_chainId and found chain 1: run `erc20-etl migrate` without --chain-id \(or --chain-id 1\)\. Nothing of it was applied/,
      );
      expect(await applied(warehouse)).not.toContain('0009_chain_keys');
      // a run of chain 10 too: the rows cannot be told apart, and migrate asks which chain they are
      await sql`INSERT INTO export_runs (chain_id, job, command, contracts, status) VALUES (10, 'other', 'run', '{}', 'failed')`.execute(warehouse.db);
      const several = await migrate(database.url);
      expect(several.code).toBe(2);
      expect(several.stderr).toMatch(/found chains 1 and 10, and its rows are not keyed by chain yet.*erc20-etl migrate --chain-id N` \(one of 1 and 10\)/);
      await sql`DELETE FROM export_runs WHERE job = 'other'`.execute(warehouse.db);
      // runs from before 0008 never checked their chain (they read chain 1 by default): --chain-id names it
      await sql`UPDATE export_runs SET started_at = ${last!.started_at}::timestamptz WHERE id = ${last!.id}`.execute(warehouse.db);

      const bad = await migrate(database.url, ['--chain-id', 'base']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/--chain-id: expected a chain id, an integer ≥ 1/);

      const r = await migrate(database.url, ['--chain-id', '8453']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/the rows written before chains are chain 8453's \(as --chain-id says\)/);
      expect(await applied(warehouse)).toContain('0009_chain_keys');
      expect(await chainsOf(warehouse)).toEqual(expectedChains(before, '8453'));
      expect(await contents(warehouse)).toEqual(before);
      // the rows are chain 8453's now: a run there writes none, and a run of chain 1 reads them all afresh
      const again = await runExport(database.url, base.base, chainJob(8453));
      expect(again.totals).toMatchObject({ rowsInserted: 0, rowsUpdated: 0, rowsRemoved: 0, headersFetched: 0 });
      // (under a name of its own: a job's name is one chain's)
      const mainnet = await runExport(database.url, devnet.base, { ...chainJob(1), name: 'upgraded-mainnet' });
      expect(mainnet.totals.rowsInserted).toBe(before.token_transfers!.length);
      const twice = await migrate(database.url, ['--chain-id', '8453']);
      expect(twice.code, twice.stderr).toBe(0);
      expect(twice.stderr).toMatch(/--chain-id changes nothing: this warehouse is keyed by chain already/);
    } finally {
      await warehouse.close();
      await database.drop();
    }
  }, 60_000);
});
