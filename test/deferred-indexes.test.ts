import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../src/dataset/types.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import type { Warehouse } from '../src/warehouse/db.ts';
import { migrationsFrom, MIGRATIONS_DIR } from '../src/warehouse/migrate.ts';
import { autovacuumSetting, DEFERRABLE_INDEXES, lookupIndex, prepareIndexes, rebuildDeferredIndexes, WAIT_NOTICE_MS } from '../src/warehouse/deferred-indexes.ts';
import { systemClock } from '../src/common/clock.ts';
import { buildLookupIndexes, prepareLookupIndexes, WAITING } from '../src/pipeline/lookup-indexes.ts';
import { LOCK_ID_OF_PARAM_1, lockKeys } from '../src/warehouse/lock-keys.ts';
import { createRange } from '../src/warehouse/ranges.ts';
import { startRun } from '../src/warehouse/runs.ts';
import { sleep, waitFor } from './helpers/chaos.ts';
import { BIN, collect, REPO_DIR, runCli } from './helpers/cli.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { captureLogger, datasetTransfers, job, migratedWarehouse, runExport, warehouseTransfers } from './helpers/exporter.ts';

const OPTIONS = { seed: 23, blocks: 600, tokens: 3, transfers: 6000, startBlock: 3_000_000 };
const HEAD = OPTIONS.startBlock + OPTIONS.blocks - 1;

type Target = Awaited<ReturnType<typeof migratedWarehouse>>;
type Indexes = Map<string, { oid: string; definition: string }>;

/** token_transfers' indexes: name → its object id (a new one once built again) and its definition. */
async function indexesOf(w: Warehouse): Promise<Indexes> {
  const { rows } = await sql<{ name: string; oid: string; definition: string }>`
    SELECT c.relname AS name, i.indexrelid::text AS oid, pg_get_indexdef(i.indexrelid) AS definition
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'token_transfers'::regclass ORDER BY c.relname`.execute(w.db);
  return new Map(rows.map((r) => [r.name, { oid: r.oid, definition: r.definition }]));
}

const definitions = (m: Map<string, { definition: string }>) => [...m].map(([name, i]) => [name, i.definition]);
const rebuilt = (before: Map<string, { oid: string }>, after: Map<string, { oid: string }>) =>
  [...before.keys()].filter((name) => after.get(name)?.oid !== before.get(name)?.oid).sort();
/** Builds lookup indexes as their migration did, the way code older than the pause built them (it forgets the records, not the pause). */
const buildByHand = async (w: Warehouse, names: readonly string[]) => {
  for (const name of names) await sql.raw(lookupIndex(name).build).execute(w.db);
};
/**
 * Whether a session of `w`'s database waits for the lookup indexes' lock (pg_locks shows a bigint key as its two halves;
 * other test files hold advisory locks of their own on the same server).
 */
const waitsForIndexesLock = async (w: Warehouse) =>
  (
    await sql<{ n: number }>`
      WITH k AS (SELECT hashtextextended(${lockKeys.indexes()}::text, 0) AS key)
      SELECT count(*)::int AS n FROM pg_locks, k
      WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND classid::bigint = (key >> 32) & 4294967295 AND objid::bigint = key & 4294967295`.execute(w.db)
  ).rows[0]!.n > 0;
/** Takes the lookup indexes' lock in a transaction of `holder` (drops and builds wait until it commits). */
const holdIndexesLock = async (holder: pg.Client) => {
  await holder.query('BEGIN');
  await holder.query(`SELECT pg_advisory_xact_lock(${LOCK_ID_OF_PARAM_1})`, [lockKeys.indexes()]);
};
const tableExists = async (w: Warehouse, table: string) => (await sql<{ table: string | null }>`SELECT to_regclass(${table})::text AS table`.execute(w.db)).rows[0]?.table != null;
const unbuilt = async (w: Warehouse) => (await w.db.selectFrom('deferred_indexes').select('name').orderBy('name').execute()).map((r) => r.name);

describe('a first load builds its lookup indexes after its rows', () => {
  let dataset: Dataset;
  let devnet: RunningDevnet;
  const contracts = () => [...new Set(dataset.transfers.map((t) => t.contractAddress))].sort();
  const wholeJob = (name: string, overrides = {}) =>
    job(
      name,
      contracts().map((address) => ({ address, fromBlock: OPTIONS.startBlock, toBlock: HEAD })),
      { pageSize: 200, commitRows: 800, concurrency: 3, ...overrides },
    );

  beforeAll(async () => {
    dataset = generateSyntheticDataset(OPTIONS);
    devnet = await startDevnet(dataset, { seed: 23, faults: { latencyMs: [3, 8] } });
  });
  afterAll(async () => {
    await devnet?.close();
  });

  it('drops them into an empty warehouse and builds them as migrated once its rows are in', async () => {
    const target = await migratedWarehouse('deferred_first');
    try {
      const before = await indexesOf(target.warehouse);
      const log = captureLogger();
      await runExport(target.url, devnet.base, wholeJob('first'), log.logger);
      expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(dataset));
      const after = await indexesOf(target.warehouse);
      expect(definitions(after)).toEqual(definitions(before));
      // built again: the primary key and the index by contract and block stayed as they were
      expect(rebuilt(before, after)).toEqual([...DEFERRABLE_INDEXES]);
      expect(await unbuilt(target.warehouse)).toEqual([]);
      expect(log.text()).toMatch(/"msg":"first load into an empty token_transfers: its lookup indexes are built after its rows".*"autovacuum":"paused till then"/);
      // autovacuum paused for the load is resumed with the builds: the table has no setting of its own again
      expect(await autovacuumSetting(target.warehouse.db)).toBeUndefined();
      expect(log.text()).toMatch(
        /"msg":"built the lookup indexes".*"indexes":\["token_transfers_block_hash","token_transfers_from","token_transfers_to"\].*"autovacuum":"resumed"/,
      );

      // a later run, into a warehouse that holds rows, keeps them up row by row; a re-read changes no row
      const again = await runExport(target.url, devnet.base, wholeJob('first'));
      expect(again.totals).toMatchObject({ rowsInserted: 0, rowsUpdated: 0 });
      expect(rebuilt(after, await indexesOf(target.warehouse))).toEqual([]);
    } finally {
      await target.drop();
    }
  });

  it('keeps them up row by row when the job says keepIndexes', async () => {
    const target = await migratedWarehouse('deferred_kept');
    try {
      const before = await indexesOf(target.warehouse);
      await runExport(target.url, devnet.base, wholeJob('kept', { keepIndexes: true }));
      expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(dataset));
      expect(rebuilt(before, await indexesOf(target.warehouse))).toEqual([]);
    } finally {
      await target.drop();
    }
  });

  /** A fresh migrated warehouse, its indexes as migrated, and a folder for job files: dropped and removed after `work`. */
  const inFreshWarehouse = async (label: string, work: (w: { target: Target; before: Indexes; jobFile(name: string, extra?: object): Promise<string> }) => Promise<void>) => {
    const target = await migratedWarehouse(label);
    const dir = await mkdtemp(join(tmpdir(), 'erc20-etl-deferred-'));
    const jobFile = async (name: string, extra = {}) => {
      const file = join(dir, `${name}.json`);
      await writeFile(file, JSON.stringify({ ...wholeJob(name), ...extra }));
      return file;
    };
    try {
      await work({ target, before: await indexesOf(target.warehouse), jobFile });
    } finally {
      await rm(dir, { recursive: true, force: true });
      await target.drop();
    }
  };
  // 120 pages at 25 requests a second: about 5 s, so a signal after the first commit falls inside the load (a job that
  // states a request rate keeps its indexes up unless it says otherwise)
  const SLOW = { pageSize: 50, commitRows: 150, requestsPerSecond: 25, keepIndexes: false };
  /** `erc20-etl run FILE`, once it has committed rows under dropped indexes. */
  const runUnderway = async (target: Target, file: string, env: NodeJS.ProcessEnv) => {
    const child = spawn(process.execPath, [BIN, 'run', file], { cwd: REPO_DIR, env: { ...process.env, ...env } });
    const result = collect(child, 120_000);
    await waitFor(async () => (await unbuilt(target.warehouse)).length > 0 && (await warehouseTransfers(target.warehouse)).length > 0, {
      what: 'rows committed under the dropped indexes',
    });
    return { child, result };
  };

  it('leaves them unbuilt when killed, says so in status, and the next run builds them and finishes the load exactly', async () => {
    await inFreshWarehouse('deferred_killed', async ({ target, before, jobFile }) => {
      const env = { DATABASE_URL: target.url, CHAIN_API_URL: devnet.base, LOG_LEVEL: 'warn' };
      const file = await jobFile('killed', SLOW);
      const { child, result } = await runUnderway(target, file, env);
      child.kill('SIGKILL');
      await result;
      expect((await warehouseTransfers(target.warehouse)).length).toBeLessThan(dataset.transfers.length);
      expect(await unbuilt(target.warehouse)).toEqual([...DEFERRABLE_INDEXES]);
      expect([...(await indexesOf(target.warehouse)).keys()]).toEqual(['token_transfers_contract_block', 'token_transfers_pkey']);
      expect(await autovacuumSetting(target.warehouse.db)).toBe('false');

      const status = await runCli(['status'], { env });
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toContain('indexes:     token_transfers_block_hash, token_transfers_from, token_transfers_to not built yet');
      expect(status.stdout).toContain('autovacuum:  paused on token_transfers by the first load of run #1; it resumes once the lookup indexes are built');
      const statusJson = JSON.parse((await runCli(['status', '--json'], { env })).stdout);
      expect(statusJson.unbuiltIndexes.map((i: { name: string }) => i.name)).toEqual([...DEFERRABLE_INDEXES]);
      expect(statusJson.pausedAutovacuum).toMatchObject({ runId: '1' });

      const next = await runCli(['run', file], { env: { ...env, LOG_LEVEL: 'info' } });
      expect(next.code, next.stderr).toBe(0);
      expect(next.stderr).toMatch(/"msg":"built the lookup indexes a first load had dropped"/);
      expect(next.stderr).toContain('"msg":"resumed autovacuum on token_transfers, which a first load had paused"');
      expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(dataset));
      expect(definitions(await indexesOf(target.warehouse))).toEqual(definitions(before));
      expect(await unbuilt(target.warehouse)).toEqual([]);
      expect(await autovacuumSetting(target.warehouse.db)).toBeUndefined();
    });
  });

  it('another run that starts while a first load has them dropped builds them before it reads, and the load still ends exact', async () => {
    await inFreshWarehouse('deferred_during', async ({ target, before, jobFile }) => {
      const env = { DATABASE_URL: target.url, CHAIN_API_URL: devnet.base, LOG_LEVEL: 'info' };
      // slower than SLOW: the other run starts and reaches its builds well inside the load
      const { result } = await runUnderway(target, await jobFile('loading', { ...SLOW, requestsPerSecond: 10 }), env);
      const other = await runCli(['run', await jobFile('other')], { env });
      expect(other.code, other.stderr).toBe(0);
      const otherLog = other.stderr;
      expect(otherLog).toMatch(/"msg":"built the lookup indexes a first load had dropped"/);
      expect(otherLog.indexOf('built the lookup indexes a first load had dropped')).toBeLessThan(otherLog.indexOf('"msg":"contract read"'));
      // the first load was still going when the other run built them: it ends with nothing left to build
      expect(await unbuilt(target.warehouse)).toEqual([]);
      expect(await autovacuumSetting(target.warehouse.db)).toBeUndefined();
      const load = await result;
      expect(load.code, load.stderr).toBe(0);
      expect(load.stderr).not.toContain('"msg":"built the lookup indexes"');
      expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(dataset));
      expect(await unbuilt(target.warehouse)).toEqual([]);
      expect(definitions(await indexesOf(target.warehouse))).toEqual(definitions(before));
    });
  });

  it('closes its ranges while its lookup indexes wait to be built, then builds them once their lock is let go', async () => {
    await inFreshWarehouse('deferred_beside', async ({ target, before }) => {
      const { db } = target.warehouse;
      const holder = new pg.Client({ connectionString: target.url });
      await holder.connect();
      try {
        const running = runExport(target.url, devnet.base, wholeJob('beside', SLOW));
        // once the load has dropped them (its first step has let go of their lock), this session takes the lock their builds need
        await waitFor(async () => (await unbuilt(target.warehouse)).length > 0, { what: 'the first load to drop its lookup indexes' });
        await holdIndexesLock(holder);
        // every range closes, its rows counted, while the builds wait
        const covered = await waitFor(
          async () => {
            const rows = await db.selectFrom('export_coverage').select(['contract_address', 'row_count']).execute();
            return rows.length === contracts().length && rows;
          },
          { what: 'the ranges to close while the builds wait', timeoutMs: 30_000 },
        );
        expect(covered.map((c) => c.contract_address).sort()).toEqual(contracts());
        expect(covered.reduce((sum, c) => sum + Number(c.row_count), 0)).toBe(dataset.transfers.length);
        expect(await unbuilt(target.warehouse)).toEqual([...DEFERRABLE_INDEXES]);
        await holder.query('COMMIT');
        const summary = await running;
        expect(summary.ranges.reduce((sum, r) => sum + r.rows, 0)).toBe(dataset.transfers.length);
        expect(await unbuilt(target.warehouse)).toEqual([]);
        expect(definitions(await indexesOf(target.warehouse))).toEqual(definitions(before));
        expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(dataset));
      } finally {
        await holder.end().catch(() => undefined);
      }
    });
  });

  /** The run's row in export_runs and its ranges' states, with the coverage it recorded. */
  const ledgerOf = async (w: Warehouse) => ({
    runs: await w.db.selectFrom('export_runs').select(['id', 'status', 'error']).orderBy('id').execute(),
    ranges: (await w.db.selectFrom('export_ranges').select('status').execute()).map((r) => r.status),
    covered: (await w.db.selectFrom('export_coverage').select('id').execute()).length,
  });

  /**
   * Stops a run under way by SIGTERM once its builds wait for the indexes' lock, which `holder` takes, and `ready` has
   * resolved; lets the builds go, checks that the run ended stopped (143) and resolves to the ledger.
   */
  const stopWhileBuildsWait = async (target: Target, underway: Awaited<ReturnType<typeof runUnderway>>, holder: pg.Client, ready: () => Promise<unknown>) => {
    await holdIndexesLock(holder);
    await waitFor(() => waitsForIndexesLock(target.warehouse), { what: 'the builds to wait for their lock' });
    await ready();
    underway.child.kill('SIGTERM');
    await sleep(300);
    await holder.query('COMMIT');
    const stopped = await underway.result;
    expect(stopped.code, stopped.stderr).toBe(143);
    return ledgerOf(target.warehouse);
  };

  it('a run stopped by SIGTERM while it builds its lookup indexes ends stopped once they are built, its ranges closed beside them', async () => {
    await inFreshWarehouse('deferred_stop_building', async ({ target, before, jobFile }) => {
      const env = { DATABASE_URL: target.url, CHAIN_API_URL: devnet.base, LOG_LEVEL: 'info' };
      const holder = new pg.Client({ connectionString: target.url });
      await holder.connect();
      try {
        const underway = await runUnderway(target, await jobFile('stop-building', SLOW), env);
        const ledger = await stopWhileBuildsWait(target, underway, holder, () =>
          waitFor(async () => (await ledgerOf(target.warehouse)).covered === contracts().length, { what: 'the ranges to close beside the builds' }),
        );
        expect(ledger.runs).toHaveLength(1);
        expect(ledger.runs[0]).toMatchObject({ status: 'failed', error: expect.stringContaining('stopped by SIGTERM') });
        expect(ledger.ranges).toEqual(contracts().map(() => 'complete'));
        expect(await unbuilt(target.warehouse)).toEqual([]);
        expect(definitions(await indexesOf(target.warehouse))).toEqual(definitions(before));
        expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(dataset));
      } finally {
        await holder.end().catch(() => undefined);
      }
    });
  });

  it('a resumed first load stopped while its close waits for the builds leaves its ranges open, and the next run closes them', async () => {
    await inFreshWarehouse('deferred_stop_pending', async ({ target, before, jobFile }) => {
      const { db } = target.warehouse;
      const env = { DATABASE_URL: target.url, CHAIN_API_URL: devnet.base, LOG_LEVEL: 'info' };
      const file = await jobFile('pending', SLOW);
      // a run of the job that planned its ranges and was killed before its first page: open ranges, an empty table; the
      // next run resumes them, and closing resumed ranges marks headers, which needs the indexes
      const runId = await startRun(db, { chainId: 1, job: 'pending', command: 'run', contracts: contracts() });
      for (const contract of contracts()) {
        await createRange(db, {
          chainId: 1,
          job: 'pending',
          contract,
          fromBlock: OPTIONS.startBlock,
          toBlock: HEAD,
          runId,
          chunks: [{ fromBlock: OPTIONS.startBlock, toBlock: HEAD }],
        });
      }
      const holder = new pg.Client({ connectionString: target.url });
      await holder.connect();
      try {
        // by half a second on, the close has found it needs the indexes and waits for them
        const ledger = await stopWhileBuildsWait(target, await runUnderway(target, file, env), holder, () => sleep(500));
        expect(ledger.runs.map((r) => r.status)).toEqual(['failed', 'failed']);
        expect(ledger.ranges).toEqual(contracts().map(() => 'open'));
        expect(ledger.covered).toBe(0);
        expect(await unbuilt(target.warehouse)).toEqual([]);

        const next = await runCli(['run', file], { env });
        expect(next.code, next.stderr).toBe(0);
        expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(dataset));
        expect(await ledgerOf(target.warehouse)).toMatchObject({ ranges: contracts().map(() => 'complete'), covered: contracts().length });
        expect(definitions(await indexesOf(target.warehouse))).toEqual(definitions(before));
      } finally {
        await holder.end().catch(() => undefined);
      }
    });
  });

  it('builds them before it ends when stopped by SIGTERM mid-load, saying so', async () => {
    await inFreshWarehouse('deferred_stopped', async ({ target, before, jobFile }) => {
      const env = { DATABASE_URL: target.url, CHAIN_API_URL: devnet.base, LOG_LEVEL: 'info' };
      const { child, result } = await runUnderway(target, await jobFile('stopped', SLOW), env);
      child.kill('SIGTERM');
      const stopped = await result;
      expect(stopped.code, stopped.stderr).toBe(143);
      expect(stopped.stderr).toContain('"msg":"the run stopped: building the lookup indexes its first load dropped before it ends"');
      expect((await warehouseTransfers(target.warehouse)).length).toBeLessThan(dataset.transfers.length);
      expect(await unbuilt(target.warehouse)).toEqual([]);
      expect(await autovacuumSetting(target.warehouse.db)).toBeUndefined();
      expect(definitions(await indexesOf(target.warehouse))).toEqual(definitions(before));
    });
  });

  it('a queued task builds the indexes a first load dropped before it closes its range (the close reads by block hash)', async () => {
    await inFreshWarehouse('deferred_worker', async ({ target, before, jobFile }) => {
      // what a first load does before its first row, as a run killed right after it leaves it
      await prepareIndexes(target.warehouse.db, { defer: true, runId: '1' });
      const env = { DATABASE_URL: target.url, CHAIN_API_URL: devnet.base, LOG_LEVEL: 'info' };
      const enqueued = await runCli(['enqueue', await jobFile('queued')], { env });
      expect(enqueued.code, enqueued.stderr).toBe(0);
      const worker = await runCli(['worker', '--once', '--dead-after', '5'], { env });
      expect(worker.code, worker.stderr).toBe(0);
      expect(worker.stderr).toMatch(/"msg":"built the lookup indexes a first load had dropped"/);
      expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(dataset));
      expect(await unbuilt(target.warehouse)).toEqual([]);
      expect(await autovacuumSetting(target.warehouse.db)).toBeUndefined();
      expect(definitions(await indexesOf(target.warehouse))).toEqual(definitions(before));
    });
  });

  it('migrate builds the indexes a stopped first load left unbuilt', async () => {
    const target = await migratedWarehouse('deferred_migrate');
    try {
      const before = await indexesOf(target.warehouse);
      // what a first load does before its first row, as a run killed right after it leaves it
      expect(await prepareIndexes(target.warehouse.db, { defer: true, runId: '1' })).toEqual({ deferred: [...DEFERRABLE_INDEXES], rebuilt: [], autovacuumPaused: true });
      expect(await unbuilt(target.warehouse)).toEqual([...DEFERRABLE_INDEXES]);
      expect(await autovacuumSetting(target.warehouse.db)).toBe('false');
      const migrated = await runCli(['migrate'], { env: { DATABASE_URL: target.url } });
      expect(migrated.code, migrated.stderr).toBe(0);
      expect(migrated.stdout).toContain('built the lookup indexes a first load had dropped: token_transfers_block_hash, token_transfers_from, token_transfers_to');
      expect(migrated.stdout).toContain('erc20-etl migrate: resumed autovacuum on token_transfers, which a first load had paused');
      expect(migrated.stdout).not.toContain(WAITING);
      expect(definitions(await indexesOf(target.warehouse))).toEqual(definitions(before));
      expect(await unbuilt(target.warehouse)).toEqual([]);
      expect(await autovacuumSetting(target.warehouse.db)).toBeUndefined();
    } finally {
      await target.drop();
    }
  });

  it('keeps them up while another session holds token_transfers past the lock timeout, and builds after its rows those a stopped first load dropped', async () => {
    const target = await migratedWarehouse('deferred_locked');
    const { db } = target.warehouse;
    const holder = new pg.Client({ connectionString: target.url });
    try {
      await holder.connect();
      const before = await indexesOf(target.warehouse);
      // a long read of the table in another session: the drops wait for it 2 s, then the load keeps the indexes
      const hold = async () => {
        await holder.query('BEGIN');
        await holder.query('LOCK TABLE token_transfers IN ACCESS SHARE MODE');
      };
      await hold();
      const reason = 'another session held token_transfers for more than 2s';
      expect(await prepareIndexes(db, { defer: true, runId: '1' })).toEqual({ deferred: [], rebuilt: [], kept: reason, keptUp: [...DEFERRABLE_INDEXES] });
      expect(definitions(await indexesOf(target.warehouse))).toEqual(definitions(before));
      expect(await unbuilt(target.warehouse)).toEqual([]);
      expect(await autovacuumSetting(db)).toBeUndefined();
      await holder.query('ROLLBACK');

      // one dropped, and autovacuum paused, by a first load stopped before its first row: both stay so, and this load
      // builds it after its rows and resumes autovacuum then
      const [first, ...others] = DEFERRABLE_INDEXES;
      await db
        .insertInto('deferred_indexes')
        .values({ name: first!, definition: before.get(first!)!.definition, run_id: '2' })
        .execute();
      await sql.raw(lookupIndex(first!).drop).execute(db);
      await db.insertInto('paused_autovacuum').values({ table_name: 'token_transfers', run_id: '2' }).execute();
      await sql`ALTER TABLE token_transfers SET (autovacuum_enabled = false)`.execute(db);
      await hold();
      const log = captureLogger();
      const deps = { warehouse: target.warehouse, logger: log.logger, clock: systemClock };
      const plan = await prepareLookupIndexes(deps, wholeJob('locked'), { runId: '3', defer: true });
      expect(plan).toEqual({ deferred: [first], rebuilt: [], kept: reason, keptUp: others, autovacuumPaused: true });
      expect(log.text()).toMatch(
        new RegExp(`"msg":"first load into an empty token_transfers: its lookup indexes are built after its rows".*"indexes":\\["${first}"\\],"autovacuum":"paused till then"`),
      );
      expect(log.text()).toMatch(new RegExp(`"msg":"first load keeps the other lookup indexes up row by row".*"indexes":\\[${others.map((n) => `"${n}"`).join(',')}\\]`));
      expect([...(await indexesOf(target.warehouse)).keys()].filter((name) => DEFERRABLE_INDEXES.includes(name))).toEqual(others);
      await holder.query('ROLLBACK');
      await buildLookupIndexes(deps, wholeJob('locked'), '3', plan);
      expect(definitions(await indexesOf(target.warehouse))).toEqual(definitions(before));
      expect(await unbuilt(target.warehouse)).toEqual([]);
      expect(await autovacuumSetting(db)).toBeUndefined();
      expect(log.text()).toMatch(new RegExp(`"msg":"built the lookup indexes".*"indexes":\\["${first}"\\].*"autovacuum":"resumed"`));
    } finally {
      await holder.end().catch(() => undefined);
      await target.drop();
    }
  });

  it("says so once it has waited a while for the lookup indexes' lock another session holds, then goes on when it is let go: a first load, its build and migrate", async () => {
    const target = await migratedWarehouse('deferred_waiting');
    const holder = new pg.Client({ connectionString: target.url });
    const waiting = () => waitsForIndexesLock(target.warehouse);
    const hold = () => holdIndexesLock(holder);
    const log = captureLogger();
    const said = () => log.text().split(`"msg":"${WAITING}"`).length - 1;
    let migrating: ReturnType<typeof runCli> | undefined;
    try {
      await holder.connect();
      const deps = { warehouse: target.warehouse, logger: log.logger, clock: systemClock };
      // nobody holds it: nothing is said
      const kept = await prepareLookupIndexes(deps, wholeJob('waiting', { keepIndexes: true }), { runId: '1', defer: false });
      expect(kept.deferred).toEqual([]);
      expect(said()).toBe(0);

      // a first load's prepare step waits, says so once the wait lasts, and drops them once let go
      await hold();
      let settled = false;
      const prepared = prepareLookupIndexes(deps, wholeJob('waiting'), { runId: '2', defer: true }).finally(() => {
        settled = true;
      });
      await waitFor(waiting, { what: "the run to wait for the lookup indexes' lock" });
      await waitFor(() => said() === 1, { what: 'the run to say it waits', timeoutMs: 20_000 });
      expect(log.text()).toContain(`"msg":"${WAITING}","job":"waiting","run":"2"`);
      expect(settled).toBe(false);
      await holder.query('COMMIT');
      const plan = await prepared;
      expect(plan.deferred).toEqual([...DEFERRABLE_INDEXES]);

      // its build after the rows, the same
      await hold();
      const built = buildLookupIndexes(deps, wholeJob('waiting'), '2', plan);
      await waitFor(() => said() === 2, { what: 'the build to say it waits', timeoutMs: 20_000 });
      expect(await unbuilt(target.warehouse)).toEqual([...DEFERRABLE_INDEXES]);
      await holder.query('COMMIT');
      await built;
      expect(await unbuilt(target.warehouse)).toEqual([]);

      // migrate, which builds what a first load left unbuilt, says so on its output
      await prepareLookupIndexes(deps, wholeJob('waiting'), { runId: '3', defer: true });
      expect(said()).toBe(2);
      await hold();
      migrating = runCli(['migrate'], { env: { DATABASE_URL: target.url } });
      await waitFor(waiting, { what: "migrate to wait for the lookup indexes' lock" });
      await sleep(WAIT_NOTICE_MS + 500);
      await holder.query('COMMIT');
      const migrated = await migrating;
      expect(migrated.code, migrated.stderr).toBe(0);
      expect(migrated.stdout).toContain(`erc20-etl migrate: ${WAITING}\n`);
      expect(migrated.stdout).toContain('built the lookup indexes a first load had dropped: token_transfers_block_hash, token_transfers_from, token_transfers_to');
      expect(await unbuilt(target.warehouse)).toEqual([]);
    } finally {
      await holder.end().catch(() => undefined);
      await migrating?.catch(() => undefined);
      await target.drop();
    }
  });

  it("leaves token_transfers' own autovacuum setting as it is, pauses it only once for a load stopped and begun again, and migrating down resumes it and builds the indexes still dropped", async () => {
    const target = await migratedWarehouse('deferred_autovacuum');
    const { db } = target.warehouse;
    try {
      const asMigrated = new Map(definitions(await indexesOf(target.warehouse)) as [string, string][]);
      for (const own of ['true', 'off']) {
        await sql.raw(`ALTER TABLE token_transfers SET (autovacuum_enabled = ${own})`).execute(db);
        expect(await prepareIndexes(db, { defer: true, runId: '1' })).toEqual({ deferred: [...DEFERRABLE_INDEXES], rebuilt: [] });
        expect(await autovacuumSetting(db)).toBe(own);
        expect(await rebuildDeferredIndexes(db)).toEqual({ built: [...DEFERRABLE_INDEXES], resumed: false });
        expect(await autovacuumSetting(db)).toBe(own);
      }
      await sql`ALTER TABLE token_transfers RESET (autovacuum_enabled)`.execute(db);
      // a first load stopped before its first row, then another: paused by the first, resumed once by the second's builds
      expect((await prepareIndexes(db, { defer: true, runId: '1' })).autovacuumPaused).toBe(true);
      expect((await prepareIndexes(db, { defer: true, runId: '2' })).autovacuumPaused).toBe(true);
      expect(await autovacuumSetting(db)).toBe('false');
      expect(await rebuildDeferredIndexes(db)).toEqual({ built: [...DEFERRABLE_INDEXES], resumed: true });
      expect(await autovacuumSetting(db)).toBeUndefined();

      // code older than the pause builds the indexes and forgets them, not the pause: the next run resumes it
      await prepareIndexes(db, { defer: true, runId: '3' });
      await buildByHand(target.warehouse, DEFERRABLE_INDEXES);
      await db.deleteFrom('deferred_indexes').execute();
      expect(await autovacuumSetting(db)).toBe('false');
      expect(await prepareIndexes(db, { defer: false, runId: '4' })).toEqual({ deferred: [], rebuilt: [], autovacuumResumed: true });
      expect(await autovacuumSetting(db)).toBeUndefined();
      expect(await db.selectFrom('paused_autovacuum').selectAll().execute()).toEqual([]);

      // a pause left so, and a first load with no index to drop (changed by a user, or gone): it is not kept for the load
      await prepareIndexes(db, { defer: true, runId: '5' });
      await db.deleteFrom('deferred_indexes').execute();
      await sql`CREATE INDEX token_transfers_from ON token_transfers USING hash (from_address)`.execute(db);
      expect(await prepareIndexes(db, { defer: true, runId: '6' })).toEqual({ deferred: [], rebuilt: [], autovacuumResumed: true });
      expect(await autovacuumSetting(db)).toBeUndefined();
      await sql`DROP INDEX token_transfers_from`.execute(db);
      await buildByHand(target.warehouse, DEFERRABLE_INDEXES);

      // migrating down past 0014 resumes a pause still recorded before it drops the record
      await prepareIndexes(db, { defer: true, runId: '7' });
      expect(await autovacuumSetting(db)).toBe('false');
      const down = await new Migrator({ db, provider: migrationsFrom(MIGRATIONS_DIR) }).migrateTo('0013_deferred_indexes');
      expect(down.error).toBeUndefined();
      expect(await autovacuumSetting(db)).toBeUndefined();
      expect(await tableExists(target.warehouse, 'paused_autovacuum')).toBe(false);

      // and past 0013, which builds the indexes still recorded before it drops their records
      const dropped = await indexesOf(target.warehouse);
      expect(await unbuilt(target.warehouse)).toEqual([...DEFERRABLE_INDEXES]);
      expect([...dropped.keys()].filter((name) => DEFERRABLE_INDEXES.includes(name))).toEqual([]);
      const downAgain = await new Migrator({ db, provider: migrationsFrom(MIGRATIONS_DIR) }).migrateTo('0012_logs_block_limit');
      expect(downAgain.error).toBeUndefined();
      const built = await indexesOf(target.warehouse);
      for (const name of DEFERRABLE_INDEXES) expect(built.get(name)?.definition, name).toBe(asMigrated.get(name));
      expect(await tableExists(target.warehouse, 'deferred_indexes')).toBe(false);
    } finally {
      await target.drop();
    }
  });
});
