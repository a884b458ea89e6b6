import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator, sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../src/dataset/types.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import { runCli } from './helpers/cli.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { createWarehouse } from '../src/warehouse/db.ts';
import { migrateToLatest, migrationsFrom, MIGRATIONS_DIR } from '../src/warehouse/migrate.ts';
import { freshDatabase } from './helpers/database.ts';
import { migratedWarehouse } from './helpers/exporter.ts';

/**
 * Issue 17's guard: before a run writes anything it asks the endpoint's eth_chainId and compares it with the job's
 * chain; the runs record their chain, and one warehouse holds several chains' rows apart.
 */

const PROJECT = 'chains-project';
const tmp = mkdtempSync(join(tmpdir(), 'erc20-etl-chain-guard-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let dataset: Dataset;
const servers: Record<number, RunningDevnet> = {};
beforeAll(async () => {
  dataset = generateSyntheticDataset({ seed: 17, blocks: 120, tokens: 2, transfers: 400, startBlock: 1000 });
  // two servers of the same seed, chains 1 and 8453: the same blocks and transfers
  for (const chainId of [1, 8453]) servers[chainId] = await startDevnet(dataset, { projectIds: [PROJECT], chainId });
});
afterAll(async () => {
  for (const s of Object.values(servers)) await s.close();
});

const api = (chainId: number) => `${servers[chainId]!.origin}/${PROJECT}`;
const contract = () => dataset.transfers[0]!.contractAddress;
const backfill = (url: string, chainApi: string, extra: string[] = []) =>
  runCli(['backfill', '--contract', contract(), '--from', '1000', '--to', '1119', ...extra], { env: { DATABASE_URL: url, CHAIN_API_URL: chainApi } });

async function counts(w: Awaited<ReturnType<typeof migratedWarehouse>>) {
  const one = async (table: 'token_transfers' | 'export_runs' | 'export_ranges' | 'block_headers') =>
    Number(
      (
        await w.warehouse.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return { transfers: await one('token_transfers'), runs: await one('export_runs'), ranges: await one('export_ranges'), headers: await one('block_headers') };
}

describe('a run checks the endpoint serves its chain before it writes', () => {
  it('exits 2 naming both chain ids for a job of chain 10 pointed at chain 8453, writing nothing and holding no lock', async () => {
    const w = await migratedWarehouse('chain_mismatch');
    try {
      const file = join(tmp, 'op.json');
      writeFileSync(file, JSON.stringify({ name: 'op', chain: 10, contracts: [{ address: contract(), fromBlock: 1000, toBlock: 1119 }] }));
      const r = await runCli(['run', file], { env: { DATABASE_URL: w.url, CHAIN_API_URL: api(8453) } });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/serves chain 8453 \(its eth_chainId\), but job "op" is for chain 10; nothing was written/);
      expect(r.stderr).toMatch(/"chain": 8453/);
      expect(await counts(w)).toEqual({ transfers: 0, runs: 0, ranges: 0, headers: 0 });
      const locks = await w.warehouse.pool.query<{ n: string }>(`SELECT count(*)::text AS n FROM pg_locks WHERE locktype = 'advisory'`);
      expect(locks.rows[0]!.n).toBe('0');
      // the same job at its own chain's endpoint runs at once: nothing was left behind
      writeFileSync(file, JSON.stringify({ name: 'op', chain: 8453, contracts: [{ address: contract(), fromBlock: 1000, toBlock: 1119 }] }));
      const ok = await runCli(['run', file], { env: { DATABASE_URL: w.url, CHAIN_API_URL: api(8453) } });
      expect(ok.code, ok.stderr).toBe(0);
    } finally {
      await w.drop();
    }
  });

  it('takes a job without "chain" for chain 1, warning that names the field; a chain 8453 endpoint is then refused', async () => {
    const w = await migratedWarehouse('chain_default');
    try {
      const refused = await backfill(w.url, api(8453));
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/serves chain 8453 \(its eth_chainId\), but job "backfill-[0-9a-f]{8}" is for chain 1 \(it names no "chain", so chain 1 is assumed\)/);
      const r = await backfill(w.url, api(1));
      expect(r.code, r.stderr).toBe(0);
      // a log line (JSON): the warning names the field
      expect(r.stderr).toMatch(/"msg":"the job names no chain, so chain 1 \(Ethereum\) is assumed: add \\"chain\\": 1[^\n]*"field":"chain"/);
      const runs = await w.warehouse.db.selectFrom('export_runs').select(['chain_id']).execute();
      expect(runs.map((x) => String(x.chain_id))).toEqual(['1']);
    } finally {
      await w.drop();
    }
  });

  it('records the chain of a backfill --chain run, and keeps another chain of the same blocks apart in the same warehouse', async () => {
    const w = await migratedWarehouse('chain_one_per_warehouse');
    try {
      const base = await backfill(w.url, api(8453), ['--chain', '8453']);
      expect(base.code, base.stderr).toBe(0);
      expect(base.stderr).not.toMatch(/names no chain/);
      const before = await counts(w);
      expect(before.transfers).toBeGreaterThan(0);
      const runs = await w.warehouse.db.selectFrom('export_runs').select(['chain_id']).execute();
      expect(runs.map((x) => String(x.chain_id))).toEqual(['8453']);
      // status shows the chain of each contract's last run
      const status = await runCli(['status'], { env: { DATABASE_URL: w.url, CHAIN_API_URL: '' } });
      expect(status.stdout).toMatch(/\n {2}last run: +#\d+ backfill-[0-9a-f]{8} succeeded, chain 8453, at /);
      const json = JSON.parse((await runCli(['status', '--json'], { env: { DATABASE_URL: w.url, CHAIN_API_URL: '' } })).stdout) as {
        contracts: { lastRun: { chainId: string } }[];
      };
      expect(json.contracts.map((c) => c.lastRun.chainId)).toEqual(['8453']);

      // the same blocks and transfers served as chain 1's: a second copy, not an update of the first
      const mainnet = await backfill(w.url, api(1), ['--chain', '1']);
      expect(mainnet.code, mainnet.stderr).toBe(0);
      expect(mainnet.stdout).toMatch(new RegExp(`rows: ${before.transfers} inserted, 0 updated`));
      expect(await counts(w)).toEqual({ transfers: 2 * before.transfers, runs: 2, ranges: 2, headers: 2 * before.headers });
      const perChain = await sql<{ chain_id: string; n: string }>`
        SELECT chain_id::text, count(*)::text AS n FROM token_transfers GROUP BY 1 ORDER BY 1`.execute(w.warehouse.db);
      expect(perChain.rows).toEqual([
        { chain_id: '1', n: String(before.transfers) },
        { chain_id: '8453', n: String(before.transfers) },
      ]);
    } finally {
      await w.drop();
    }
  });

  it('enqueue exits 2 too, before it installs the queue: no run, no queue schema', async () => {
    const w = await migratedWarehouse('chain_enqueue');
    try {
      const file = join(tmp, 'op-enqueue.json');
      writeFileSync(file, JSON.stringify({ name: 'op-enqueue', chain: 10, contracts: [{ address: contract(), fromBlock: 1000, toBlock: 1119 }] }));
      const r = await runCli(['enqueue', file], { env: { DATABASE_URL: w.url, CHAIN_API_URL: api(8453) } });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/serves chain 8453 \(its eth_chainId\), but job "op-enqueue" is for chain 10/);
      expect(await counts(w)).toEqual({ transfers: 0, runs: 0, ranges: 0, headers: 0 });
      const queue = await sql<{ n: string }>`SELECT count(*)::text AS n FROM pg_namespace WHERE nspname = 'graphile_worker'`.execute(w.warehouse.db);
      expect(queue.rows[0]!.n).toBe('0');
    } finally {
      await w.drop();
    }
  });

  it("leaves a queued task to a worker of the job's chain: a worker at another chain's endpoint reads and fails nothing", async () => {
    const w = await migratedWarehouse('chain_worker');
    try {
      const file = join(tmp, 'queued.json');
      writeFileSync(file, JSON.stringify({ name: 'queued', chain: 1, contracts: [{ address: contract(), fromBlock: 1000, toBlock: 1119 }], concurrency: 1 }));
      const enqueued = await runCli(['enqueue', file], { env: { DATABASE_URL: w.url, CHAIN_API_URL: api(1) } });
      expect(enqueued.code, enqueued.stderr).toBe(0);
      const wrong = await runCli(['worker', '--once', '--dead-after', '5'], { env: { DATABASE_URL: w.url, CHAIN_API_URL: api(8453) } });
      expect(wrong.stderr).toMatch(/serves chain 8453 \(its eth_chainId\), but job \\"queued\\" is for chain 1.*This worker cannot read the task/);
      expect((await counts(w)).transfers).toBe(0);
      const running = await w.warehouse.db.selectFrom('export_runs').select(['status', 'chain_id']).execute();
      expect(running.map((r) => [r.status, String(r.chain_id)])).toEqual([['running', '1']]);
      // the task comes back after graphile-worker's first backoff (about 3 s), and a worker of chain 1 reads it
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      const right = await runCli(['worker', '--once', '--dead-after', '5'], { env: { DATABASE_URL: w.url, CHAIN_API_URL: api(1) } });
      expect(right.code, right.stderr).toBe(0);
      const done = await w.warehouse.db.selectFrom('export_runs').select(['status']).execute();
      expect(done.map((r) => r.status)).toEqual(['succeeded']);
      expect((await counts(w)).transfers).toBe(dataset.transfers.filter((t) => t.contractAddress === contract()).length);
    } finally {
      await w.drop();
    }
  }, 120_000);

  it('refuses a --chain that is not a chain id, naming the flag', async () => {
    const r = await runCli(['backfill', '--contract', contract(), '--from', '1', '--to', '2', '--chain', 'base'], {
      env: { DATABASE_URL: 'postgres://x@127.0.0.1:1/x', CHAIN_API_URL: api(1) },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--chain: expected a chain id, an integer ≥ 1/);
  });
});

describe('a warehouse written before runs recorded their chain', () => {
  it('takes its runs as chain 1 after migrating: chain 1 goes on, and another chain is added apart', async () => {
    const database = await freshDatabase('chain_upgrade');
    const warehouse = createWarehouse({ databaseUrl: database.url, logger: pino({ level: 'silent' }), maxConnections: 2 });
    try {
      const migrator = new Migrator({ db: warehouse.db, provider: migrationsFrom(MIGRATIONS_DIR) });
      expect((await migrator.migrateTo('0007_node_source')).error).toBeUndefined();
      await sql`INSERT INTO export_runs (job, command, contracts, status) VALUES ('old', 'run', ${[contract()]}, 'succeeded')`.execute(warehouse.db);
      await migrateToLatest(warehouse);
      const runs = await sql<{ chain_id: string }>`SELECT chain_id::text FROM export_runs`.execute(warehouse.db);
      expect(runs.rows).toEqual([{ chain_id: '1' }]);
      const r = await backfill(database.url, api(1), ['--chain', '1']);
      expect(r.code, r.stderr).toBe(0);
      const base = await backfill(database.url, api(8453), ['--chain', '8453']);
      expect(base.code, base.stderr).toBe(0);
      const chains = await sql<{ chain_id: string }>`SELECT DISTINCT chain_id::text FROM token_transfers ORDER BY 1`.execute(warehouse.db);
      expect(chains.rows).toEqual([{ chain_id: '1' }, { chain_id: '8453' }]);
    } finally {
      await warehouse.close();
      await database.drop();
    }
  });
});
