import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBenchDatabase, withClient, type BenchDatabase, type BenchPostgres } from './bench-database.ts';
import { plainCopyBaseline, readTruth, type CopyBaseline } from './copy-baseline.ts';
import { startDevnetProcess, type DevnetChain, type DevnetProcess } from './devnet-process.ts';
import type { Probes } from './exporter-process.ts';
import { backfillArgs, measureIdleProcess, measureLoad, type LoadFigures, type ProcessBaseline } from './measure-load.ts';
import { postgresCpuProbe } from './postgres-cpu.ts';
import { clockTicksPerSecond } from './proc-stat.ts';
import { rowsTouchedBy } from './run-ledger.ts';
import { enableStatements } from './statements.ts';
import { diffWrites, settledWrites, type WriteSnapshot } from './table-writes.ts';
import { TARGETS } from './targets.ts';

export interface ChainSize {
  transfers: number;
  blocks: number;
}

export interface ExporterBenchOptions {
  postgres: BenchPostgres;
  /** The main figures: first load, COPY baseline, re-run, memory, dense API use. */
  dense: ChainSize;
  /** The smaller chain of the growth ratio (a tenth of `dense`). */
  growth: ChainSize;
  /** Few transfers over many blocks: API use where chunks are thin. */
  sparse: ChainSize;
  /**
   * A chain served with latency and a rate limit, and a job with the same requestsPerSecond and this
   * headerBatchSize (header POSTs share the rate limit with pages).
   */
  latency: ChainSize & { latencyMs: number; rateLimit: number; headerBatchSize: number };
  tokens: number;
  pageSize: number;
  concurrency: number;
  /** An exporter run still going after this long is stopped and its scenario fails. */
  runTimeoutMs: number;
  /** Record the slowest statements of each run (pg_stat_statements, when the server has it loaded). */
  statements?: boolean;
  /** Progress lines for the person waiting (stderr). */
  note(line: string): void;
}

export interface ChainFigures extends ChainSize {
  tokens: number;
  /** Distinct blocks the transfers point at: the headers a first load fetches. */
  distinctBlocks: number;
  serverStartupSeconds: number;
}

export interface DenseResult {
  chain: ChainFigures;
  copy: CopyBaseline;
  first: LoadFigures;
  /** first.rowsPerSecond / copy.rowsPerSecond */
  firstLoadVsCopy: number;
  rerun: LoadFigures & {
    /** first.wallSeconds / rerun.wallSeconds */
    speedup: number;
    /** n_tup_ins + n_tup_upd + n_tup_del of token_transfers during the re-run (pg_stat_user_tables). */
    tokenTransfersWritten: number;
    /** Rows whose inserted_by_run or updated_by_run is the re-run. */
    rowsTouched: number;
    /** The other tables' counters that moved, per table. */
    otherTablesWritten: WriteSnapshot;
  };
}

export interface SingleLoadResult {
  chain: ChainFigures;
  load: LoadFigures;
}

export interface LatencyResult extends SingleLoadResult {
  latencyMs: number;
  rateLimit: number;
  headerBatchSize: number;
  /** 0.9 × rateLimit × pageSize: the target. */
  targetRowsPerSecond: number;
  /** Every request the run made: pages, and JSON-RPC POSTs (headers, the chain head), which share the rate limit. */
  requests: number;
  /** Rows over the run's own span (run row written → closed): process start-up is not the rate limit's. */
  runRowsPerSecond: number;
  /** requests ÷ (rateLimit × run span): the share of the rate limit the run used. */
  fill: number;
  /** Rows over the page-reading phase alone. */
  readPhaseRowsPerSecond?: number;
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: string };

export interface ExporterBenchResult {
  baseline: Outcome<ProcessBaseline>;
  dense: Outcome<DenseResult>;
  growth: Outcome<SingleLoadResult & { timeRatio: number }>;
  sparse: Outcome<SingleLoadResult>;
  latency: Outcome<LatencyResult>;
}

/** The plain-COPY baseline's rows as COPY text, in the scenario's temporary folder. */
const COPY_FILE = 'transfers.copy';

interface Scenario {
  devnet: DevnetProcess;
  db: BenchDatabase;
  statements: boolean;
  chain: ChainFigures;
  tmp: string;
  probes: Probes;
}

/**
 * Measures the exporter end to end, each scenario with its own reference server process and its own fresh
 * database, the exporter always in its own process: dense (plain-COPY baseline, first load, re-run),
 * growth (a tenth of dense), sparse, and latency-bound. A failed scenario is reported and the others go on.
 *
 * @example
 * const result = await benchExporter({ postgres, dense: { transfers: 1e6, blocks: 1e5 }, growth, sparse, latency,
 *   tokens: 3, pageSize: 1000, concurrency: 4, runTimeoutMs: 1_200_000, note: console.error });
 * result.dense.ok && result.dense.value.firstLoadVsCopy // → 0.44
 */
export async function benchExporter(o: ExporterBenchOptions): Promise<ExporterBenchResult> {
  const ticksPerSecond = clockTicksPerSecond();
  const postgresCpu = await postgresCpuProbe(o.postgres.serverUrl, ticksPerSecond);
  const scenario = async <T>(label: string, size: ChainSize, options: { serverFlags?: string[]; copyFile?: boolean }, work: (s: Scenario) => Promise<T>): Promise<Outcome<T>> => {
    const extraFlags = options.serverFlags ?? [];
    try {
      o.note(`${label}: starting the reference server (${fmt(size.transfers)} transfers over ${fmt(size.blocks)} blocks${extraFlags.length ? `, ${extraFlags.join(' ')}` : ''})`);
      const devnet = await startDevnetProcess({ transfers: size.transfers, blocks: size.blocks, tokens: o.tokens } satisfies DevnetChain, extraFlags);
      try {
        const db = await createBenchDatabase(o.postgres.serverUrl, label);
        const tmp = await mkdtemp(join(tmpdir(), 'erc20-etl-bench-'));
        try {
          const truth = await readTruth(devnet.origin, options.copyFile ? join(tmp, COPY_FILE) : undefined);
          if (truth.rows !== size.transfers) throw new Error(`the server's truth has ${truth.rows} transfers, expected ${size.transfers}`);
          const chain = { ...size, tokens: devnet.contracts.length, distinctBlocks: truth.distinctBlocks, serverStartupSeconds: devnet.startupSeconds };
          const probes: Probes = { ticksPerSecond, serverPid: devnet.pid, serverStats: devnet.stats, ...(postgresCpu && { postgresCpu }) };
          const statements = o.statements === true && (await withClient(db.url, enableStatements));
          if (o.statements && !statements) o.note(`${label}: pg_stat_statements is not loaded on this server; no statement times`);
          return { ok: true, value: await work({ devnet, db, chain, tmp, probes, statements }) };
        } finally {
          await rm(tmp, { recursive: true, force: true });
          await db.drop();
        }
      } finally {
        await devnet.stop();
      }
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      o.note(`${label}: failed: ${error}`);
      return { ok: false, error };
    }
  };
  const backfill = (s: Scenario) => backfillArgs(s.devnet, s.chain.blocks, o);
  const load = (s: Scenario, args: string[], expect: { rows: number; newBlocks: number }, job: { headerBatchSize?: number } = {}) =>
    measureLoad({ ...s, postgres: o.postgres, pageSize: o.pageSize, concurrency: o.concurrency, ...job, timeoutMs: o.runTimeoutMs, note: o.note }, args, expect);

  let baseline: Outcome<ProcessBaseline>;
  try {
    o.note('baseline: erc20-etl --help, three times');
    baseline = { ok: true, value: await measureIdleProcess(ticksPerSecond) };
  } catch (err) {
    baseline = { ok: false, error: err instanceof Error ? err.message : String(err) };
  }

  const dense = await scenario('dense', o.dense, { copyFile: true }, async (s) => {
    o.note(`dense: plain COPY of ${fmt(s.chain.transfers)} rows into a copy of token_transfers`);
    const copy = await plainCopyBaseline(s.db.url, join(s.tmp, COPY_FILE), s.chain.transfers, postgresCpu);
    o.note(`dense: first load (backfill of ${fmt(s.chain.transfers)} transfers)`);
    const first = await load(s, backfill(s), { rows: s.chain.transfers, newBlocks: s.chain.distinctBlocks });
    const before = await withClient(s.db.url, (c) => settledWrites(c));
    o.note('dense: re-run of the same range');
    const rerun = await load(s, backfill(s), { rows: s.chain.transfers, newBlocks: 0 });
    const written = diffWrites(before, await withClient(s.db.url, (c) => settledWrites(c)));
    const tt = written['token_transfers'];
    const { token_transfers: _, ...otherTablesWritten } = written;
    return {
      chain: s.chain,
      copy,
      first,
      firstLoadVsCopy: first.rowsPerSecond / copy.rowsPerSecond,
      rerun: {
        ...rerun,
        speedup: first.wallSeconds / rerun.wallSeconds,
        tokenTransfersWritten: tt ? tt.inserted + tt.updated + tt.deleted : 0,
        rowsTouched: await withClient(s.db.url, (c) => rowsTouchedBy(c, rerun.ledger.runId)),
        otherTablesWritten,
      },
    };
  });

  const growth = await scenario('growth', o.growth, {}, async (s) => {
    o.note(`growth: first load (backfill of ${fmt(s.chain.transfers)} transfers)`);
    const loaded = await load(s, backfill(s), { rows: s.chain.transfers, newBlocks: s.chain.distinctBlocks });
    const timeRatio = dense.ok ? dense.value.first.wallSeconds / loaded.wallSeconds : Number.NaN;
    return { chain: s.chain, load: loaded, timeRatio };
  });

  const sparse = await scenario('sparse', o.sparse, {}, async (s) => {
    o.note(`sparse: first load (backfill of ${fmt(s.chain.transfers)} transfers over ${fmt(s.chain.blocks)} blocks)`);
    return { chain: s.chain, load: await load(s, backfill(s), { rows: s.chain.transfers, newBlocks: s.chain.distinctBlocks }) };
  });

  const L = o.latency;
  const latency = await scenario('latency', L, { serverFlags: ['--latency-ms', String(L.latencyMs), '--rate-limit', String(L.rateLimit)] }, async (s) => {
    const file = join(s.tmp, 'latency-job.json');
    const fromBlock = s.devnet.head - s.chain.blocks + 1;
    const job = {
      name: 'bench-latency',
      contracts: s.devnet.contracts.map((address) => ({ address, fromBlock, toBlock: s.devnet.head })),
      pageSize: o.pageSize,
      concurrency: o.concurrency,
      requestsPerSecond: L.rateLimit,
      headerBatchSize: L.headerBatchSize,
    };
    await writeFile(file, JSON.stringify(job, null, 2));
    o.note(`latency: erc20-etl run (requestsPerSecond ${L.rateLimit}, headerBatchSize ${L.headerBatchSize}, server latency ${L.latencyMs} ms, rate limit ${L.rateLimit}/s)`);
    const loaded = await load(s, ['run', file], { rows: s.chain.transfers, newBlocks: s.chain.distinctBlocks }, { headerBatchSize: L.headerBatchSize });
    const read = loaded.phases.find((p) => p.name.includes('read pages'));
    const requests = loaded.api.transferRequests + loaded.api.rpcPosts;
    const runSeconds = loaded.runSeconds ?? loaded.wallSeconds;
    return {
      chain: s.chain,
      load: loaded,
      latencyMs: L.latencyMs,
      rateLimit: L.rateLimit,
      headerBatchSize: L.headerBatchSize,
      targetRowsPerSecond: TARGETS.latencyShare * L.rateLimit * o.pageSize,
      requests,
      runRowsPerSecond: loaded.rows / runSeconds,
      fill: requests / L.rateLimit / runSeconds,
      ...(read && read.seconds > 0 && { readPhaseRowsPerSecond: loaded.rows / read.seconds }),
    };
  });

  return { baseline, dense, growth, sparse, latency };
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}
