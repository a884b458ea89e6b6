import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator, sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../src/dataset/types.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import { BIN, collect, REPO_DIR, runCli } from './helpers/cli.ts';
import { waitFor } from './helpers/chaos.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { createWarehouse } from '../src/warehouse/db.ts';
import { migrateToLatest, migrationsFrom, MIGRATIONS_DIR } from '../src/warehouse/migrate.ts';
import { freshDatabase } from './helpers/database.ts';
import { migratedWarehouse } from './helpers/exporter.ts';
import { routingProxy } from './helpers/routing-proxy.ts';

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
      expect(refused.stderr).toMatch(/serves chain 8453 \(its eth_chainId\), but job "backfill-[0-9a-f]{8}" is for chain 1 \(no --chain was given, so chain 1 is assumed\)/);
      expect(refused.stderr).toContain('if chain 8453 is the one you mean, pass --chain 8453.');
      expect(refused.stderr).not.toContain('job file');
      const r = await backfill(w.url, api(1));
      expect(r.code, r.stderr).toBe(0);
      // a log line (JSON): the warning names the flag a backfill has, not a job file it has not
      expect(r.stderr).toMatch(/"msg":"no --chain given, so chain 1 \(Ethereum\) is assumed: pass --chain 1 to say so"[^\n]*"flag":"--chain"/);
      expect(r.stderr).not.toContain('job file');
      const runs = await w.warehouse.db.selectFrom('export_runs').select(['chain_id']).execute();
      expect(runs.map((x) => String(x.chain_id))).toEqual(['1']);
      // a job file without "chain" is told about the field
      const file = join(tmp, 'no-chain.json');
      writeFileSync(file, JSON.stringify({ name: 'no-chain', contracts: [{ address: contract(), fromBlock: 1000, toBlock: 1119 }] }));
      const fromFile = await runCli(['run', file], { env: { DATABASE_URL: w.url, CHAIN_API_URL: api(8453) } });
      expect(fromFile.code).toBe(2);
      expect(fromFile.stderr).toMatch(/"msg":"the job names no chain, so chain 1 \(Ethereum\) is assumed: add \\"chain\\": 1 to the job file"[^\n]*"field":"chain"/);
      expect(fromFile.stderr).toMatch(/is for chain 1 \(it names no "chain", so chain 1 is assumed\)/);
      expect(fromFile.stderr).toContain('if chain 8453 is the one you mean, set "chain": 8453 in the job file.');
    } finally {
      await w.drop();
    }
  });

  it('records the chain of a backfill --chain run, and keeps another chain of the same blocks apart in the same warehouse', async () => {
    const w = await migratedWarehouse('chain_one_per_warehouse');
    try {
      const base = await backfill(w.url, api(8453), ['--chain', '8453']);
      expect(base.code, base.stderr).toBe(0);
      expect(base.stderr).not.toMatch(/chain 1 \(Ethereum\) is assumed/);
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

  it("routes queued tasks by chain: each worker takes its endpoint's chain's tasks only, the chunks and a scheduled enqueue", async () => {
    const w = await migratedWarehouse('chain_worker');
    try {
      const file = join(tmp, 'queued.json');
      writeFileSync(file, JSON.stringify({ name: 'queued', chain: 1, contracts: [{ address: contract(), fromBlock: 1000, toBlock: 1119 }], concurrency: 1 }));
      const base = join(tmp, 'queued-base.json');
      writeFileSync(base, JSON.stringify({ name: 'queued-base', chain: 8453, contracts: [{ address: contract(), fromBlock: 1000, toBlock: 1119 }], concurrency: 1 }));
      for (const [f, chain] of [
        [file, 1],
        [base, 8453],
      ] as const) {
        const enqueued = await runCli(['enqueue', f], { env: { DATABASE_URL: w.url, CHAIN_API_URL: api(chain) } });
        expect(enqueued.code, enqueued.stderr).toBe(0);
      }
      const tasks = await sql<{ task_identifier: string; n: string }>`
        SELECT task_identifier, count(*)::text AS n FROM graphile_worker.jobs GROUP BY 1 ORDER BY 1`.execute(w.warehouse.db);
      expect(tasks.rows.map((r) => r.task_identifier)).toEqual(['erc20_etl_chunk', 'erc20_etl_chunk_8453']);
      // a scheduled enqueue of chain 8453's job, as a crontab adds it
      await sql`SELECT graphile_worker.add_job('erc20_etl_enqueue_8453', ${JSON.stringify({ job: JSON.parse(readFileSync(base, 'utf8')) })}::json)`.execute(w.warehouse.db);
      // the worker at chain 8453's endpoint reads chain 8453's chunks and runs its enqueue; chain 1's wait, untouched
      const baseWorker = await runCli(['worker', '--once', '--dead-after', '5'], { env: { DATABASE_URL: w.url, CHAIN_API_URL: api(8453) } });
      expect(baseWorker.code, baseWorker.stderr).toBe(0);
      expect(baseWorker.stderr).toMatch(/"msg":"worker started"[^\n]*"chain":8453/);
      // and says why chain 1's tasks stay on the queue
      expect(baseWorker.stderr).toMatch(
        new RegExp(`"msg":"tasks of other chains wait on the queue: this worker takes its endpoint's chain's only[^\\n]*"chain":8453,"waiting":\\{"1":${tasks.rows[0]!.n}\\}`),
      );
      expect(baseWorker.stderr).not.toMatch(/failed|cannot read/);
      const runs = () => w.warehouse.db.selectFrom('export_runs').select(['job', 'status', 'chain_id', 'command']).orderBy('id').execute();
      expect((await runs()).map((r) => [r.job, r.status, String(r.chain_id)])).toEqual([
        ['queued', 'running', '1'],
        ['queued-base', 'succeeded', '8453'],
      ]);
      const perChain = await sql<{ chain_id: string; n: string }>`SELECT chain_id::text, count(*)::text AS n FROM token_transfers GROUP BY 1`.execute(w.warehouse.db);
      const rows = String(dataset.transfers.filter((t) => t.contractAddress === contract()).length);
      expect(perChain.rows).toEqual([{ chain_id: '8453', n: rows }]);
      const left = await sql<{ task_identifier: string; attempts: number }>`SELECT task_identifier, attempts FROM graphile_worker.jobs`.execute(w.warehouse.db);
      expect(left.rows).toEqual(Array.from({ length: Number(tasks.rows[0]!.n) }, () => ({ task_identifier: 'erc20_etl_chunk', attempts: 0 })));
      // … then a worker of chain 1 reads chain 1's
      const right = await runCli(['worker', '--once', '--dead-after', '5'], { env: { DATABASE_URL: w.url, CHAIN_API_URL: api(1) } });
      expect(right.code, right.stderr).toBe(0);
      expect((await runs()).map((r) => [r.job, r.status])).toEqual([
        ['queued', 'succeeded'],
        ['queued-base', 'succeeded'],
      ]);
      const both = await sql<{ chain_id: string; n: string }>`SELECT chain_id::text, count(*)::text AS n FROM token_transfers GROUP BY 1 ORDER BY 1`.execute(w.warehouse.db);
      expect(both.rows).toEqual([
        { chain_id: '1', n: rows },
        { chain_id: '8453', n: rows },
      ]);
    } finally {
      await w.drop();
    }
  }, 120_000);

  it('a worker whose endpoint comes to serve another chain stops at its next task, leaving it untouched for a worker of its chain', async () => {
    const w = await migratedWarehouse('chain_switch');
    let switching = await startDevnet(dataset, { projectIds: [PROJECT], chainId: 1 });
    const port = Number(new URL(switching.origin).port);
    const child = spawn(process.execPath, [BIN, 'worker', '--dead-after', '5'], {
      cwd: REPO_DIR,
      env: { ...process.env, DATABASE_URL: w.url, CHAIN_API_URL: `${switching.origin}/${PROJECT}`, LOG_LEVEL: 'info' },
    });
    let logs = '';
    child.stderr.on('data', (d: Buffer) => (logs += d.toString()));
    const ended = collect(child, 60_000);
    try {
      await waitFor(async () => logs.includes('"msg":"worker listening for tasks"'), { what: 'the worker listening' });
      expect(logs).toMatch(/"msg":"worker started"[^\n]*"chain":1/);
      // the same URL now answers for chain 8453 (a proxy, DNS or a provider's settings changed behind it)
      await switching.close();
      switching = await startDevnet(dataset, { projectIds: [PROJECT], chainId: 8453, port });
      const file = join(tmp, 'switched.json');
      writeFileSync(file, JSON.stringify({ name: 'switched', chain: 1, contracts: [{ address: contract(), fromBlock: 1000, toBlock: 1119 }], concurrency: 3 }));
      const enqueued = await runCli(['enqueue', file], { env: { DATABASE_URL: w.url, CHAIN_API_URL: api(1) } });
      expect(enqueued.code, enqueued.stderr).toBe(0);
      const r = await ended;
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain("erc20-etl: CHAIN_API_URL now serves chain 8453; this worker started on chain 1 and takes chain 1's tasks only");
      expect(r.stderr).not.toContain(PROJECT);
      // nothing read, nothing written: the task waits for a worker of chain 1
      expect((await counts(w)).transfers).toBe(0);
      expect((await counts(w)).headers).toBe(0);
      const queued = async () =>
        (
          await sql<{ task_identifier: string; wait_ms: number; attempts: number; locked: boolean }>`
            SELECT task_identifier, greatest(0, extract(epoch FROM run_at - now()) * 1000)::int AS wait_ms, attempts, locked_at IS NOT NULL AS locked
            FROM graphile_worker.jobs`.execute(w.warehouse.db)
        ).rows;
      const left = await queued();
      expect(left.length).toBeGreaterThan(1);
      expect(new Set(left.map((t) => t.task_identifier))).toEqual(new Set(['erc20_etl_chunk']));
      // given back as they were: no attempt used, no back-off, no lock
      expect(left.map((t) => [t.attempts, t.wait_ms, t.locked])).toEqual(left.map(() => [0, 0, false]));
      expect(r.stderr).toContain('gave back the tasks left unread');

      // a worker at a chain 1 endpoint reads them at once
      const right = await runCli(['worker', '--once', '--dead-after', '5'], { env: { DATABASE_URL: w.url, CHAIN_API_URL: api(1) } });
      expect(right.code, right.stderr).toBe(0);
      const perChain = await sql<{ chain_id: string; n: string }>`SELECT chain_id::text, count(*)::text AS n FROM token_transfers GROUP BY 1`.execute(w.warehouse.db);
      expect(perChain.rows).toEqual([{ chain_id: '1', n: String(dataset.transfers.filter((t) => t.contractAddress === contract()).length) }]);
      const runs = await w.warehouse.db.selectFrom('export_runs').select(['job', 'status']).execute();
      expect(runs).toEqual([{ job: 'switched', status: 'succeeded' }]);
    } finally {
      child.kill('SIGKILL');
      await switching.close();
      await w.drop();
    }
  }, 120_000);

  it('a --once worker whose endpoint turns to another chain after it starts gives back every ready task it took, none used up', async () => {
    const w = await migratedWarehouse('chain_switch_once');
    // the worker's own question at start is answered by chain 1, every later eth_chainId (one per task) by chain 8453
    let asked = 0;
    const proxy = await routingProxy((body) => servers[body.includes('"eth_chainId"') && asked++ > 0 ? 8453 : 1]!.origin);
    const { origin } = proxy;
    try {
      const file = join(tmp, 'switched-once.json');
      writeFileSync(file, JSON.stringify({ name: 'switched-once', chain: 1, contracts: [{ address: contract(), fromBlock: 1000, toBlock: 1119 }], concurrency: 3 }));
      const enqueued = await runCli(['enqueue', file], { env: { DATABASE_URL: w.url, CHAIN_API_URL: api(1) } });
      expect(enqueued.code, enqueued.stderr).toBe(0);
      // and a scheduled enqueue of the job, as a worker's crontab adds it, first in line: the task that finds the turn
      const job = JSON.parse(readFileSync(file, 'utf8')) as unknown;
      await sql`SELECT graphile_worker.add_job('erc20_etl_enqueue', ${JSON.stringify({ job })}::json, priority => -1)`.execute(w.warehouse.db);
      const tasks = async () =>
        (
          await sql<{ attempts: number; wait_ms: number; locked: boolean }>`
            SELECT attempts, greatest(0, extract(epoch FROM run_at - now()) * 1000)::int AS wait_ms, locked_at IS NOT NULL AS locked
            FROM graphile_worker.jobs ORDER BY id`.execute(w.warehouse.db)
        ).rows;
      const before = await tasks();
      expect(before.length).toBeGreaterThan(1);

      const once = await runCli(['worker', '--once', '--dead-after', '5', '--concurrency', '1'], {
        env: { DATABASE_URL: w.url, CHAIN_API_URL: `${origin}/${PROJECT}`, LOG_LEVEL: 'info' },
      });
      expect(once.code, once.stderr).toBe(1);
      expect(once.stderr).toContain('CHAIN_API_URL now serves chain 8453; this worker started on chain 1');
      // it asked the endpoint once at start and once for its first task, the scheduled enqueue; the chunks it took
      // after that it left at once, unasked
      expect(asked).toBe(2);
      expect(once.stderr).toContain('so the scheduled enqueue of job "switched-once" was left untouched');
      expect(once.stderr.match(/"msg":"task failed; it will be tried again"/g)?.length).toBe(before.length);
      expect(await tasks()).toEqual(before.map(() => ({ attempts: 0, wait_ms: 0, locked: false })));
      expect(once.stderr).toMatch(new RegExp(`"msg":"gave back the tasks left unread[^\\n]*"tasks":${before.length}`));
      expect((await counts(w)).transfers).toBe(0);
    } finally {
      await proxy.close();
      await w.drop();
    }
  }, 120_000);

  it('refuses a job whose name has run on another chain, naming both chains and what to rename, writing nothing', async () => {
    const w = await migratedWarehouse('chain_job_name');
    try {
      const file = join(tmp, 'usdc.json');
      const write = (chain: number) => writeFileSync(file, JSON.stringify({ name: 'usdc', chain, contracts: [{ address: contract(), fromBlock: 1000, toBlock: 1119 }] }));
      write(1);
      expect((await runCli(['run', file], { env: { DATABASE_URL: w.url, CHAIN_API_URL: api(1) } })).code).toBe(0);
      const before = await counts(w);
      write(8453);
      for (const command of ['run', 'enqueue']) {
        const r = await runCli([command, file], { env: { DATABASE_URL: w.url, CHAIN_API_URL: api(8453) } });
        expect(r.code, `${command}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toMatch(/Job "usdc" has run on chain 1 in this warehouse, and this one is for chain 8453; nothing was written/);
        expect(r.stderr).toMatch(/rename this one, e\.g\. "usdc-8453"/);
      }
      expect(await counts(w)).toEqual(before);
    } finally {
      await w.drop();
    }
  });

  it('does not hold a name to a chain its endpoint never confirmed: a run that failed before it could ask leaves the name free', async () => {
    const w = await migratedWarehouse('chain_unconfirmed');
    try {
      const file = join(tmp, 'fresh.json');
      const write = (chain: number) => writeFileSync(file, JSON.stringify({ name: 'fresh', chain, contracts: [{ address: contract(), fromBlock: 1000, toBlock: 1119 }] }));
      write(8453);
      // the key refused: the run fails in its ledger (recorded under the job's chain), having planned nothing
      const refused = await runCli(['run', file], { env: { DATABASE_URL: w.url, CHAIN_API_URL: `${servers[1]!.origin}/not-the-project` } });
      expect(refused.code, refused.stderr).toBe(1);
      const runs = () => w.warehouse.db.selectFrom('export_runs').select(['status', 'chain_id']).orderBy('id').execute();
      expect((await runs()).map((r) => [r.status, String(r.chain_id)])).toEqual([['failed', '8453']]);
      // the user meant chain 1: the corrected job runs
      write(1);
      const meant = await runCli(['run', file], { env: { DATABASE_URL: w.url, CHAIN_API_URL: api(1) } });
      expect(meant.code, meant.stderr).toBe(0);
      expect((await runs()).map((r) => [r.status, String(r.chain_id)])).toEqual([
        ['failed', '8453'],
        ['succeeded', '1'],
      ]);
      // and the name is chain 1's from now on: chain 8453 is refused
      write(8453);
      const other = await runCli(['run', file], { env: { DATABASE_URL: w.url, CHAIN_API_URL: api(8453) } });
      expect(other.code, other.stderr).toBe(2);
      expect(other.stderr).toMatch(/Job "fresh" has run on chain 1 in this warehouse, and this one is for chain 8453/);
    } finally {
      await w.drop();
    }
  });

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
