import { readFile } from 'node:fs/promises';
import type { BudgetReport } from '../src/common/time-budget.ts';
import { wallBudget, type WallPart } from './wall-budget.ts';
import { apiUse, type ApiUse } from './api-efficiency.ts';
import { withClient, type BenchDatabase, type BenchPostgres } from './bench-database.ts';
import type { DevnetProcess } from './devnet-process.ts';
import { pagesServed, runExporterProcess, type Probes } from './exporter-process.ts';
import { indexBuildStart, splitPhases, type Phase } from './phases.ts';
import { lastRun, runningStatements, warehouseCounts } from './run-ledger.ts';
import { resetStatements, topStatements, type StatementTime } from './statements.ts';

/** One exporter process run, as measured from outside. */
export interface LoadFigures {
  rows: number;
  /** Spawn to exit, and rows / that. */
  wallSeconds: number;
  rowsPerSecond: number;
  /** The run's own span in export_runs (started_at → finished_at): without process start-up and exit. */
  runSeconds?: number;
  peakRssMb: number;
  peakAtSeconds: number;
  cpuSeconds: { exporter?: number; server?: number; postgres?: number };
  phases: Phase[];
  api: ApiUse;
  ledger: { runId: string; inserted: number; updated: number; unchanged: number; headersFetched: number };
  /** The warehouse afterwards holds exactly the chain's transfers and one header per distinct block. */
  exact: boolean;
  /** With `statements`: where PostgreSQL spent its execution time, longest first. */
  statements?: StatementTime[];
  /** With `statements`: the plans of the statements that took more than 5 s (auto_explain). */
  slowPlans?: string[];
  /** With `budgetFile`: where the process's wall time went (`--time-budget`, plus start-up and shutdown). */
  budget?: WallPart[];
}

/** The exporter process doing nothing (`erc20-etl --help`): its fixed start-up cost and memory. */
export interface ProcessBaseline {
  /** Medians of three runs. */
  wallSeconds: number;
  cpuSeconds: number;
  peakRssMb: number;
}

/**
 * Runs `erc20-etl --help` three times: what every exporter process costs before it does any work.
 *
 * @example await measureIdleProcess(100) // → { wallSeconds: 0.3, cpuSeconds: 0.3, peakRssMb: 50 }
 */
export async function measureIdleProcess(ticksPerSecond: number): Promise<ProcessBaseline> {
  const runs: ProcessBaseline[] = [];
  for (let i = 0; i < 3; i++) {
    // sampled every 10 ms: the compiled CLI prints its help and exits within a few hundred ms
    const run = await runExporterProcess(['--help'], {}, { ticksPerSecond }, { intervalMs: 10 });
    if (run.code !== 0) throw new Error(`erc20-etl --help exited with ${run.code}: ${run.stderrTail.slice(-500)}`);
    const cpu = run.samples.findLast((x) => x.exporterCpuSeconds !== undefined)?.exporterCpuSeconds ?? Number.NaN;
    runs.push({ wallSeconds: run.wallSeconds, cpuSeconds: cpu, peakRssMb: run.peakRssMb });
  }
  const median = (key: keyof ProcessBaseline) => runs.map((r) => r[key]).sort((a, b) => a - b)[1]!;
  return { wallSeconds: median('wallSeconds'), cpuSeconds: median('cpuSeconds'), peakRssMb: median('peakRssMb') };
}

/**
 * `backfill` of every contract over the chain's last `blocks` blocks, at the bench's concurrency, and its page size
 * when given (a node source has none: `--source node` takes no `--page-size`).
 */
export function backfillArgs(devnet: DevnetProcess, blocks: number, o: { pageSize?: number; concurrency: number }): string[] {
  const args = ['backfill'];
  for (const contract of devnet.contracts) args.push('--contract', contract);
  args.push('--from', String(devnet.head - blocks + 1), '--to', String(devnet.head));
  if (o.pageSize !== undefined) args.push('--page-size', String(o.pageSize));
  args.push('--concurrency', String(o.concurrency));
  return args;
}

/** What a measured exporter run needs: its server, its database, and how to watch them. */
export interface LoadContext {
  devnet: DevnetProcess;
  db: BenchDatabase;
  postgres: BenchPostgres;
  probes: Probes;
  /** pg_stat_statements is installed in `db`: record where PostgreSQL spent its time. */
  statements: boolean;
  /** What the warehouse must hold afterwards: the chain's transfers, and a header per distinct block. */
  chain: { transfers: number; distinctBlocks: number };
  pageSize: number;
  concurrency: number;
  /** The job's `headerBatchSize`, when it is not the default. */
  headerBatchSize?: number;
  /** An exporter process still running after this long is stopped, and the run fails saying what it was doing. */
  timeoutMs: number;
  /** Ask the exporter for its time budget (`--time-budget`), written to this file. */
  budgetFile?: string;
  note(line: string): void;
}

/**
 * Runs one exporter process (`erc20-etl ARGS…` against the context's server and database) and measures it
 * from outside: wall time, peak RSS, CPU of every process, phases, the server's counters against the API
 * targets, the run ledger, and whether the warehouse then holds exactly the chain. A non-zero exit throws.
 *
 * @example const first = await measureLoad(ctx, backfillArgs(devnet, 100_000, ctx), { rows: 1_000_000, newBlocks: 95_123 });
 */
export async function measureLoad(ctx: LoadContext, args: string[], expect: { rows: number; newBlocks: number }): Promise<LoadFigures> {
  await ctx.devnet.resetStats();
  if (ctx.statements) {
    await withClient(ctx.db.url, resetStatements);
    ctx.postgres.takeSlowPlans();
  }
  let busy: string[] = [];
  const command = ctx.budgetFile ? [...args, '--time-budget', ctx.budgetFile] : args;
  const run = await runExporterProcess(command, { DATABASE_URL: ctx.db.url, CHAIN_API_URL: ctx.devnet.apiUrl }, ctx.probes, {
    timeoutMs: ctx.timeoutMs,
    onTimeout: async () => {
      busy = await withClient(ctx.db.url, (c) => runningStatements(c));
    },
  });
  if (run.timedOut) {
    throw new Error(
      `erc20-etl ${args[0]} did not finish within ${ctx.timeoutMs / 1000} s and was stopped` +
        (busy.length ? `; PostgreSQL was running: ${busy.join(' | ')}` : '; PostgreSQL was running no statement of it'),
    );
  }
  if (run.code !== 0) {
    throw new Error(`erc20-etl ${args[0]} exited with ${run.code} after ${run.wallSeconds.toFixed(1)} s:\n${run.stderrTail.trim().split('\n').slice(-8).join('\n')}`);
  }
  const stats = await ctx.devnet.stats();
  const statements = ctx.statements ? await withClient(ctx.db.url, (c) => topStatements(c, 8)) : undefined;
  const { ledger, counts } = await withClient(ctx.db.url, async (c) => ({ ledger: await lastRun(c), counts: await warehouseCounts(c) }));
  if (!ledger) throw new Error('the exporter exited with 0 but export_runs has no run');
  const headerCalls = stats.rpcCalls['erigon_getHeaderByHash'] ?? 0;
  const buildStartedAt = indexBuildStart(run.stderrTail);
  const phases = splitPhases(
    {
      spawnedAt: run.startedAt,
      exitedAt: run.endedAt,
      runStartedAt: ledger.startedAt,
      ...(ledger.reconcileStartedAt !== undefined && { reconcileStartedAt: ledger.reconcileStartedAt }),
      ...(buildStartedAt !== undefined && { indexBuildStartedAt: buildStartedAt }),
      ...(ledger.finishedAt !== undefined && { runFinishedAt: ledger.finishedAt }),
      transferRequests: pagesServed(stats),
      headerCalls,
    },
    run.samples,
  );
  const last = run.samples.at(-1);
  const first = run.samples[0];
  const exporterCpu = run.samples.findLast((x) => x.exporterCpuSeconds !== undefined)?.exporterCpuSeconds;
  const delta = (key: 'serverCpuSeconds' | 'postgresCpuSeconds') => (first?.[key] !== undefined && last?.[key] !== undefined ? last[key] - first[key] : undefined);
  const figures: LoadFigures = {
    rows: expect.rows,
    wallSeconds: run.wallSeconds,
    rowsPerSecond: expect.rows / run.wallSeconds,
    ...(ledger.finishedAt !== undefined && { runSeconds: (ledger.finishedAt - ledger.startedAt) / 1000 }),
    peakRssMb: run.peakRssMb,
    peakAtSeconds: run.peakAtSeconds,
    cpuSeconds: {
      ...(exporterCpu !== undefined && { exporter: exporterCpu }),
      ...(delta('serverCpuSeconds') !== undefined && { server: delta('serverCpuSeconds') }),
      ...(delta('postgresCpuSeconds') !== undefined && { postgres: delta('postgresCpuSeconds') }),
    },
    phases,
    api: apiUse(stats, {
      rows: expect.rows,
      newBlocks: expect.newBlocks,
      pageSize: ctx.pageSize,
      concurrency: ctx.concurrency,
      ...(ctx.headerBatchSize !== undefined && { headerBatchSize: ctx.headerBatchSize }),
    }),
    ledger: {
      runId: ledger.id,
      inserted: ledger.rowsInserted,
      updated: ledger.rowsUpdated,
      unchanged: ledger.rowsUnchanged,
      headersFetched: ledger.headersFetched,
    },
    exact: counts.transfers === ctx.chain.transfers && counts.headers === ctx.chain.distinctBlocks,
    ...(statements && { statements, slowPlans: ctx.postgres.takeSlowPlans() }),
    ...(ctx.budgetFile && { budget: wallBudget(run.startedAt, run.endedAt, JSON.parse(await readFile(ctx.budgetFile, 'utf8')) as BudgetReport) }),
  };
  ctx.note(
    `  ${fmt(figures.rows)} rows in ${figures.wallSeconds.toFixed(1)} s (${fmt(figures.rowsPerSecond)} rows/s), peak RSS ${fmt(figures.peakRssMb)} MB, ` +
      `${pagesServed(stats)} pages, ${figures.api.headerCalls} header calls in ${figures.api.headerPosts} POSTs`,
  );
  return figures;
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}
