import { spawn } from 'node:child_process';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../src/dataset/types.ts';
import { createRng } from '../src/devnet/rng.ts';
import type { DevnetConfig } from '../src/devnet/server.ts';
import { generateSyntheticDataset, type SyntheticOptions } from '../src/devnet/synthetic.ts';
import { createWarehouse, type Warehouse } from '../src/warehouse/db.ts';
import { migrateToLatest } from '../src/warehouse/migrate.ts';
import { chunkPositions, contractsOf, diffTransfers, EXACT, positionsAheadOfRows, sleep, waitFor, writeFigures } from './helpers/chaos.ts';
import { BIN, collect, REPO_DIR, type CliResult } from './helpers/cli.ts';
import { freshDatabase, type FreshDatabase } from './helpers/database.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { datasetTransfers, truthOf, warehouseTransfers } from './helpers/exporter.ts';

const CONCURRENCY = 3;
const KILLS = 10;
const KILL_SEED = 4242;

interface Setup {
  options: SyntheticOptions;
  /** The reference server's faults and limits. */
  devnet: Partial<DevnetConfig>;
  /** What the backfill is told besides contracts, blocks and concurrency. */
  args: string[];
  /** Where the figures go (`.data/figures/NAME.json`). */
  figures: string;
  /** What a page is, for the figures. */
  page: Record<string, number | string>;
}

/** A node job's page is one eth_getLogs span: the server caps spans at this many blocks (Infura's refusal). */
const NODE_SPAN = 5;
const SETUPS: Record<'builder' | 'node', Setup> = {
  // a long backfill: 20,000 transfers of 3 tokens in pages of 50 (~400 pages over 6 chunks), a few ms of
  // latency per request; a first load's transaction holds about four pages (`--commit-rows`), so the kills fall
  // between and inside transactions of several pages, and ten of them still leave work for the last run
  builder: {
    options: { seed: 31, blocks: 5_000, tokens: 3, transfers: 20_000, startBlock: 7_000_000 },
    devnet: { faults: { latencyMs: [2, 6] }, seed: 31 },
    args: ['--page-size', '50', '--commit-rows', '200'],
    figures: 'crash-kill',
    page: { pageSize: 50 },
  },
  // the same for a node job (`--source node`), on a smaller chain: 4,000 transfers of 3 tokens over 1,000
  // blocks in eth_getLogs spans of 5 blocks (~600 pages over 6 chunks), each span's headers fetched for its
  // blooms, transactions of about four spans; the same 10 kills at the same moments
  node: {
    options: { seed: 31, blocks: 1_000, tokens: 3, transfers: 4_000, startBlock: 7_000_000 },
    devnet: { faults: { latencyMs: [2, 6] }, seed: 31, logsLimits: { maxRange: NODE_SPAN, style: 'infura' } },
    args: ['--source', 'node', '--commit-rows', '30'],
    figures: 'crash-kill-node',
    page: { source: 'node', logsSpanBlocks: NODE_SPAN },
  },
};

interface KillFigures {
  kill: number;
  /** Pages the killed run was let commit, and the extra wait after them (both drawn from the seeded PRNG). */
  afterPages: number;
  delayMs: number;
  run: string;
  pagesCommitted: number;
  rowsCommitted: number;
  chunks: number;
  chunksDone: number;
  /** Milliseconds from spawning the process to killing it. */
  livedMs: number;
}

describe.each(['builder', 'node'] as const)('%s jobs: a long backfill SIGKILLed at seeded random moments', (source) => {
  const { options: OPTIONS, devnet: devnetConfig, args: sourceArgs, figures: figuresName, page } = SETUPS[source];
  const HEAD = OPTIONS.startBlock + OPTIONS.blocks - 1;
  let dataset: Dataset;
  let truth: Dataset;
  let devnet: RunningDevnet;
  let database: FreshDatabase;
  // the test's own connections carry their own application_name, so the exporter's are easy to tell apart
  let observer: Warehouse;
  const kills: KillFigures[] = [];
  let final: Record<string, unknown> | undefined;

  beforeAll(async () => {
    dataset = generateSyntheticDataset(OPTIONS);
    devnet = await startDevnet(dataset, devnetConfig);
    truth = await truthOf(devnet.origin);
    database = await freshDatabase(`crash_kill_${source}`);
    observer = createWarehouse({ databaseUrl: database.url, logger: pino({ level: 'silent' }), maxConnections: 2, applicationName: 'crash-kill-observer' });
    await migrateToLatest(observer);
  });
  afterAll(async () => {
    await writeFigures(figuresName, {
      dataset: OPTIONS,
      ...page,
      concurrency: CONCURRENCY,
      killSeed: KILL_SEED,
      killsSurvived: kills.length,
      kills,
      final,
    });
    await observer?.close();
    await database?.drop();
    await devnet?.close();
  });

  const contracts = () => contractsOf(dataset);
  const spawnBackfill = () => {
    const args = [BIN, 'backfill', ...contracts().flatMap((c) => ['--contract', c]), '--from', String(OPTIONS.startBlock), '--to', String(HEAD)];
    args.push(...sourceArgs, '--concurrency', String(CONCURRENCY));
    const env = { ...process.env, DATABASE_URL: database.url, CHAIN_API_URL: devnet.base, LOG_LEVEL: 'warn' };
    const child = spawn(process.execPath, args, { cwd: REPO_DIR, env });
    let exited = false;
    const result = collect(child, 180_000).finally(() => (exited = true));
    return { child, result, exited: () => exited };
  };
  const scalar = async (query: string): Promise<number> => Number((await observer.pool.query<{ n: string }>(query)).rows[0]?.n ?? 0);
  const runCount = () => scalar('SELECT count(*)::text AS n FROM export_runs');
  const committedPages = () => scalar('SELECT coalesce(sum(pages), 0)::text AS n FROM export_chunks');
  const exporterSessions = () => scalar(`SELECT count(*)::text AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'erc20-etl'`);

  it('keeps every committed position behind its rows after each kill, and the final run completes the chain exactly', async () => {
    const rng = createRng(KILL_SEED);
    for (let kill = 1; kill <= KILLS; kill++) {
      const afterPages = rng.int(0, 24);
      const delayMs = rng.int(0, 120);
      const runsBefore = await runCount();
      const spawned = performance.now();
      const backfill = spawnBackfill();
      const stillRunning = async (): Promise<CliResult | undefined> => (backfill.exited() ? backfill.result : undefined);

      // the moment: once this run is in the ledger, after `afterPages` more committed pages and `delayMs` more
      await waitFor(async () => backfill.exited() || (await runCount()) > runsBefore, { what: `run ${kill} to start`, timeoutMs: 60_000 });
      const base = await committedPages();
      await waitFor(async () => backfill.exited() || (await committedPages()) >= base + afterPages, { what: `${afterPages} pages of run ${kill}`, timeoutMs: 60_000 });
      await sleep(delayMs);
      const early = await stillRunning();
      expect(early, `the backfill ended by itself before kill ${kill}: ${early?.stderr}`).toBeUndefined();
      backfill.child.kill('SIGKILL');
      const killed = await backfill.result;
      expect(killed.signal, `kill ${kill}: ${killed.stderr}`).toBe('SIGKILL');
      const livedMs = Math.round(performance.now() - spawned);
      // its sessions end with the process; only then is what it committed final
      await waitFor(async () => (await exporterSessions()) === 0, { what: `the sessions of killed run ${kill} to end`, timeoutMs: 30_000 });

      const committed = await warehouseTransfers(observer);
      const diff = diffTransfers(committed, datasetTransfers(truth));
      // what was committed is right, just not all there yet
      expect(
        { extra: diff.extra, changed: diff.changed, duplicated: diff.duplicated, examples: diff.examples.filter((e) => !e.startsWith('missing')) },
        `rows after kill ${kill}`,
      ).toEqual({
        extra: 0,
        changed: 0,
        duplicated: 0,
        examples: [],
      });
      const chunks = await chunkPositions(observer.pool);
      expect(positionsAheadOfRows(chunks, truth, committed), `positions after kill ${kill}`).toEqual([]);
      const runs = await observer.db.selectFrom('export_runs').select(['id', 'status']).orderBy('id').execute();
      expect(runs.map((r) => r.status)).toEqual([...Array<string>(kill - 1).fill('failed'), 'running']);

      kills.push({
        kill,
        afterPages,
        delayMs,
        run: runs.at(-1)!.id,
        pagesCommitted: chunks.reduce((sum, c) => sum + c.pages, 0),
        rowsCommitted: committed.length,
        chunks: chunks.length,
        chunksDone: chunks.filter((c) => c.done).length,
        livedMs,
      });
    }
    // every kill left work to do, so each one interrupted the backfill
    expect(kills.at(-1)!.rowsCommitted).toBeLessThan(OPTIONS.transfers);

    const rowsBefore = kills.at(-1)!.rowsCommitted;
    const started = performance.now();
    const last = await spawnBackfill().result;
    expect(last.code, last.stderr).toBe(0);
    const ms = Math.round(performance.now() - started);

    const rows = await warehouseTransfers(observer);
    expect(diffTransfers(rows, datasetTransfers(truth))).toMatchObject({ rows: OPTIONS.transfers, expected: OPTIONS.transfers, ...EXACT });
    const hashes = new Set((await observer.db.selectFrom('block_headers').select('hash').execute()).map((h) => h.hash));
    expect(truth.transfers.filter((t) => !hashes.has(t.blockHash))).toEqual([]);

    // the ledger: each killed run failed (marked by the next run), the last succeeded and only loaded what
    // no killed run had committed: no committed page was read twice
    const runs = await observer.db.selectFrom('export_runs').selectAll().orderBy('id').execute();
    expect(runs.map((r) => r.status)).toEqual([...Array<string>(KILLS).fill('failed'), 'succeeded']);
    for (const r of runs.slice(0, KILLS)) expect(r.error).toMatch(/killed or crashed/);
    const lastRun = runs.at(-1)!;
    // every run's row counts what its committed pages inserted, the killed runs' too: they are added with the pages
    const insertedBy = await observer.pool.query<{ run: string; n: string }>(
      'SELECT inserted_by_run::text AS run, count(*)::text AS n FROM token_transfers GROUP BY inserted_by_run',
    );
    const byRun = new Map(insertedBy.rows.map((r) => [r.run, Number(r.n)]));
    expect(runs.map((r) => Number(r.rows_inserted))).toEqual(runs.map((r) => byRun.get(String(r.id)) ?? 0));
    expect({ inserted: Number(lastRun.rows_inserted), updated: Number(lastRun.rows_updated), unchanged: Number(lastRun.rows_unchanged) }).toEqual({
      inserted: OPTIONS.transfers - rowsBefore,
      updated: 0,
      unchanged: 0,
    });
    // nothing is left open, and each contract's range is covered once
    expect(await scalar('SELECT count(*)::text AS n FROM export_chunks')).toBe(0);
    expect(await scalar(`SELECT count(*)::text AS n FROM export_ranges WHERE status <> 'complete'`)).toBe(0);
    const coverage = await observer.db.selectFrom('export_coverage').select(['contract_address', 'from_block', 'to_block', 'row_count']).orderBy('contract_address').execute();
    expect(coverage.map((c) => [c.contract_address, Number(c.from_block), Number(c.to_block), Number(c.row_count)])).toEqual(
      contracts().map((c) => [c, OPTIONS.startBlock, HEAD, truth.transfers.filter((t) => t.contractAddress === c).length]),
    );

    final = {
      run: lastRun.id,
      exitCode: last.code,
      rowsBefore,
      rowsInserted: Number(lastRun.rows_inserted),
      rows: rows.length,
      ms,
      // what the killed runs inserted, as their rows say (added in the pages' own transactions)
      killedRunsLedgerRowsInserted: runs.slice(0, KILLS).map((r) => Number(r.rows_inserted)),
    };
  }, 240_000);
});
