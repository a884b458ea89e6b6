import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../src/dataset/types.ts';
import { diffTransfers, EXACT, triggerReorg, truthTransfers } from './helpers/chaos.ts';
import { runCli } from './helpers/cli.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { captureLogger, datasetTransfers, job, migratedWarehouse, runExport, warehouseTransfers } from './helpers/exporter.ts';
import { losingProxy } from './helpers/lost-answers.ts';
import { BLOCKS, CONCURRENCY, PAGE_SIZE, skewedChain, START } from './helpers/skewed-chain.ts';
import { pino } from 'pino';
import { systemClock } from '../src/common/clock.ts';
import { createWarehouse } from '../src/warehouse/db.ts';
import { createRange, splitChunk } from '../src/warehouse/ranges.ts';
import { startRun } from '../src/warehouse/runs.ts';
import { skippedLogsOfRun } from '../src/warehouse/skipped-logs.ts';
import { startRunLedger } from '../src/pipeline/run-ledger.ts';
import { createSourceCounters } from '../src/common/source-counters.ts';
import { retryStatement } from '../src/warehouse/statement-retry.ts';

// PostgreSQL commits a run's statement and the network drops before its answer arrives: the run retries the statement
// on a new connection (as it does any lost connection), and the statement, run again, finds its own work done rather
// than doing it twice. Without that, a retry opened a second run row, a second range, a second chunk over blocks
// already given away, and a range summary of 0 rows.

const RULES = {
  run: /^insert into "export_runs"/,
  range: /^insert into "export_ranges"/,
  split: /^update "export_chunks" set "from_block"/,
  headers: /^COPY block_headers/,
  close: /^update "export_ranges" set "status"/,
  ledger: /"api_requests" = "api_requests" \+/,
};

let chain: Dataset;
let devnet: RunningDevnet;
let target: Awaited<ReturnType<typeof migratedWarehouse>>;

beforeAll(async () => {
  chain = skewedChain();
  devnet = await startDevnet(chain, { faults: { latencyMs: [2, 6] } });
  target = await migratedWarehouse('lost_answers');
});
afterAll(async () => {
  await devnet?.close();
  await target?.drop();
});

const contract = () => chain.transfers[0]!.contractAddress;
const config = () => job('lost', [{ address: contract(), fromBlock: START, toBlock: START + BLOCKS - 1 }], { pageSize: PAGE_SIZE, concurrency: CONCURRENCY });
const count = async (sql: string): Promise<number> => Number((await target.warehouse.pool.query<{ n: string }>(sql)).rows[0]!.n);

describe('a run whose statements commit while their answers are lost', () => {
  it('keeps one run row, one range, one chunk per split and its counts, and ends with every row once', async () => {
    const proxy = await losingProxy(target.url, Object.values(RULES));
    try {
      const log = captureLogger();
      const summary = await runExport(proxy.url, devnet.base, config(), log.logger);
      // every answer named was lost once, and the run said it tried again
      expect([...proxy.fired].sort()).toEqual(
        Object.values(RULES)
          .map((r) => r.source)
          .sort(),
      );
      expect(log.text()).toMatch(/PostgreSQL failed while recording the run; trying again/);
      expect(log.text()).toMatch(/PostgreSQL failed while splitting a chunk; trying again/);

      expect(diffTransfers(await warehouseTransfers(target.warehouse), datasetTransfers(chain))).toMatchObject(EXACT);
      const runs = await target.warehouse.db.selectFrom('export_runs').selectAll().execute();
      expect(runs.map((r) => [r.id, r.status, Number(r.rows_inserted), Number(r.headers_fetched), Number(r.api_requests)])).toEqual([
        [summary.runId, 'succeeded', chain.transfers.length, await count('SELECT count(*) AS n FROM block_headers'), summary.totals.apiRequests],
      ]);
      expect(await count("SELECT count(*) AS n FROM export_ranges WHERE status = 'complete'")).toBe(1);
      expect(await count('SELECT count(*) AS n FROM export_ranges')).toBe(1);
      // a second chunk over the blocks a split gave away would have kept the range open, its chunks with it
      expect(await count('SELECT count(*) AS n FROM export_chunks')).toBe(0);
      expect(summary.ranges).toEqual([{ contract: contract(), fromBlock: START, toBlock: START + BLOCKS - 1, rows: chain.transfers.length, removed: 0 }]);
      expect(summary.totals.headersFetched).toBe(new Set(chain.transfers.map((t) => t.blockHash)).size);
    } finally {
      await proxy.close();
    }
  }, 120_000);

  it("says what a range's closing removed when that closing's answer was lost", async () => {
    // the newest 64 blocks replaced: the run reading them again removes the rows of the old fork
    await triggerReorg(devnet.origin, 64);
    const proxy = await losingProxy(target.url, [RULES.close]);
    try {
      const summary = await runExport(proxy.url, devnet.base, config());
      expect(proxy.fired).toEqual([RULES.close.source]);
      const removed = await count(`SELECT count(*) AS n FROM token_transfers_removed WHERE removed_by_run = ${Number(summary.runId)}`);
      expect(removed).toBeGreaterThan(0);
      const truth = await truthTransfers(devnet.origin);
      expect(summary.ranges).toEqual([{ contract: contract(), fromBlock: START, toBlock: START + BLOCKS - 1, rows: truth.length, removed }]);
      expect(summary.totals.rowsRemoved).toBe(removed);
      expect(diffTransfers(await warehouseTransfers(target.warehouse), truth)).toMatchObject(EXACT);
    } finally {
      await proxy.close();
    }
  }, 120_000);

  it('gives blocks of a chunk away once when the split committed and its answer was lost', async () => {
    // a chunk of a range of its own, nothing committed yet: the split gives away its lower half
    const range = await createRange(target.warehouse.db, {
      chainId: 1,
      job: 'split-once',
      contract: contract(),
      fromBlock: 100,
      toBlock: 199,
      runId: '999',
      chunks: [{ fromBlock: 100, toBlock: 199 }],
    });
    const proxy = await losingProxy(target.url, [RULES.split]);
    const warehouse = createWarehouse({ databaseUrl: proxy.url, logger: pino({ level: 'silent' }), maxConnections: 2 });
    try {
      const chunk = range.chunks[0]!;
      const part = await retryStatement(() => splitChunk(warehouse.db, chunk, 149), { clock: systemClock });
      expect(proxy.fired).toEqual([RULES.split.source]);
      expect(part).toMatchObject({ fromBlock: 100, toBlock: 149 });
      expect(chunk).toMatchObject({ fromBlock: 150, toBlock: 199, queryFromBlock: 100 });
      const chunks = await target.warehouse.db.selectFrom('export_chunks').select(['id', 'from_block', 'to_block']).where('range_id', '=', range.id).orderBy('id').execute();
      expect(chunks.map((c) => [c.id, Number(c.from_block), Number(c.to_block)])).toEqual([
        [chunk.id, 150, 199],
        [part!.id, 100, 149],
      ]);
    } finally {
      await warehouse.close();
      await proxy.close();
    }
  });

  it('enqueues once when the enqueue committed and its answer was lost: the retry finds its ranges and tasks', async () => {
    const db = await migratedWarehouse('lost_enqueue');
    const proxy = await losingProxy(db.url, [RULES.run]);
    const dir = mkdtempSync(join(tmpdir(), 'lost-enqueue-'));
    try {
      const file = join(dir, 'lost-enqueue.json');
      writeFileSync(file, JSON.stringify({ name: 'lost-enqueue', chain: 1, contracts: [{ address: contract(), fromBlock: START, toBlock: START + BLOCKS - 1 }], concurrency: 2 }));
      const r = await runCli(['enqueue', file], { env: { DATABASE_URL: proxy.url, CHAIN_API_URL: devnet.base } });
      expect(proxy.fired).toEqual([RULES.run.source]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain('PostgreSQL failed while enqueueing the job; trying again');
      expect(r.stdout).toMatch(/0 chunk task\(s\) queued \(4 were queued already\)/);
      const one = async (sql: string) => Number((await db.warehouse.pool.query<{ n: string }>(sql)).rows[0]!.n);
      expect(await one("SELECT count(*) AS n FROM export_runs WHERE status = 'running'")).toBe(1);
      expect(await one('SELECT count(*) AS n FROM export_runs')).toBe(1);
      expect(await one('SELECT count(*) AS n FROM export_ranges')).toBe(1);
      expect(await one('SELECT count(*) AS n FROM graphile_worker.jobs')).toBe(4);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await proxy.close();
      await db.drop();
    }
  }, 120_000);

  it("writes a ledger addition again when its first attempt's backend was stranded in its transaction: ended, then written once", async () => {
    const runId = await startRun(target.warehouse.db, { chainId: 1, job: 'ledger-stranded', command: 'backfill', contracts: [contract()] });
    const proxy = await losingProxy(target.url, [RULES.ledger], { strand: true });
    const warehouse = createWarehouse({ databaseUrl: proxy.url, logger: pino({ level: 'silent' }), maxConnections: 2 });
    try {
      const counters = createSourceCounters();
      const ledger = startRunLedger({ warehouse, logger: pino({ level: 'silent' }) }, { runId, source: { counters, skippedLogs: () => new Map() } });
      ledger.totals.headersFetched = 5;
      // the write's UPDATE is done, its transaction open on a backend the client has lost: it holds the run's row
      await ledger.flush();
      expect(proxy.fired).toHaveLength(1);
      const open = await target.warehouse.pool.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction' AND query ~ 'api_requests'",
      );
      expect(open.rows[0]!.n).toBe('1');
      ledger.totals.headersFetched = 12;
      // the last write ends that backend, learns its transaction rolled back, and writes everything once
      await ledger.stop();
      const run = await target.warehouse.db.selectFrom('export_runs').select(['headers_fetched']).where('id', '=', runId).executeTakeFirstOrThrow();
      expect(Number(run.headers_fetched)).toBe(12);
    } finally {
      await warehouse.close();
      await proxy.close();
    }
  });

  it("counts a ledger write once when it committed and its answer was lost, the run's totals and its skipped logs alike", async () => {
    const runId = await startRun(target.warehouse.db, { chainId: 1, job: 'ledger-once', command: 'backfill', contracts: [contract()] });
    const proxy = await losingProxy(target.url, [RULES.ledger, /^insert into "export_run_skipped_logs"/]);
    const warehouse = createWarehouse({ databaseUrl: proxy.url, logger: pino({ level: 'silent' }), maxConnections: 2 });
    try {
      const counters = { ...createSourceCounters(), rpcPosts: 5 };
      const skipped = new Map([[contract(), { erc721: 3, other: 1 }]]);
      const ledger = startRunLedger({ warehouse, logger: pino({ level: 'silent' }) }, { runId, source: { counters, skippedLogs: () => skipped } });
      ledger.totals.headersFetched = 7;
      // both writes commit and lose their answers; the last write asks PostgreSQL before it takes anything back
      await ledger.flush();
      expect(proxy.fired).toHaveLength(2);
      await ledger.stop();
      const run = await target.warehouse.db.selectFrom('export_runs').select(['api_requests', 'headers_fetched']).where('id', '=', runId).executeTakeFirstOrThrow();
      expect([Number(run.api_requests), Number(run.headers_fetched)]).toEqual([5, 7]);
      expect(await skippedLogsOfRun(target.warehouse.db, runId)).toEqual(new Map([[contract(), { erc721: 3, other: 1 }]]));
    } finally {
      await warehouse.close();
      await proxy.close();
    }
  });
});
