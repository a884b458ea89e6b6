import type { Logger } from 'pino';
import type { Clock } from '../common/clock.ts';
import type { JobConfig } from '../config/job-schema.ts';
import type { SourceCounters } from '../source/counters.ts';
import type { RunMetrics } from '../metrics/run-metrics.ts';
import type { ApiEndpoint } from '../source/api-url.ts';
import type { Warehouse } from '../warehouse/db.ts';
import { tryJobLock, type JobLock } from '../warehouse/job-lock.ts';
import { createRange, openRanges, type RangeState } from '../warehouse/ranges.ts';
import { reconcileRanges } from '../warehouse/reconcile.ts';
import { countRequests, emptyTotals, failAbandonedRuns, recordRun, setRunSpan, startRun, type RunTotals } from '../warehouse/runs.ts';
import { lastCoveredBlocks } from '../warehouse/coverage.ts';
import { enrichRanges, type HeaderSource } from './enrich.ts';
import { createHeaderQueue, type HeaderQueue } from './header-queue.ts';
import { JobLockedError } from './errors.ts';
import { EtlError, FatalError } from '../common/errors.ts';
import { classifyPgError } from '../warehouse/pg-errors.ts';
import { resolveHead } from './head.ts';
import { planRun } from './plan.ts';
import type { Progress } from './progress.ts';
import { readChunk, type PageSource } from './read-chunk.ts';
import { runChunks } from './chunk-scheduler.ts';
import { onCommittedPage } from './page-events.ts';

export interface RunDeps {
  warehouse: Warehouse;
  transfers: PageSource;
  rpc: HeaderSource & { blockNumber(): Promise<number | undefined> };
  counters: SourceCounters;
  endpoint: Pick<ApiEndpoint, 'redact'>;
  logger: Logger;
  clock: Clock;
  progress: Progress;
  /** Prometheus metrics, when the command serves them. */
  metrics?: RunMetrics;
}

export interface RangeSummary {
  contract: string;
  fromBlock: number;
  toBlock: number;
  rows: number;
  removed: number;
}

export interface RunSummary {
  runId: string;
  job: string;
  head: number;
  ranges: RangeSummary[];
  totals: RunTotals;
  ms: number;
}

/**
 * One run of a job: lock → plan → read every chunk (pages committed with their positions) →
 * fetch each new block header once → reconcile the finished ranges → close the run ledger.
 * Fails loudly and leaves the ledger saying why; what was committed stays, and the next run resumes it.
 */
export async function runJob(deps: RunDeps, job: Readonly<JobConfig>, command: 'run' | 'backfill'): Promise<RunSummary> {
  const { warehouse, logger } = deps;
  const started = deps.clock.now();
  const lock = await tryJobLock(warehouse.pool, job.name);
  if (!lock) throw new JobLockedError(job.name);
  const untrack = deps.metrics?.trackSource(deps.counters);
  const totals = emptyTotals();
  let runId: string | undefined;
  let ledgerTimer: ReturnType<typeof setInterval> | undefined;
  let ledgerWrite: Promise<void> = Promise.resolve();
  const stopLedgerTimer = async () => {
    clearInterval(ledgerTimer);
    await ledgerWrite;
  };
  const flush = () => countRequests(totals, deps.counters);
  try {
    const abandoned = await failAbandonedRuns(warehouse.db, job.name);
    if (abandoned) logger.warn({ msg: 'earlier runs of this job ended without finishing; resuming their work', job: job.name, runs: abandoned });
    const contracts = job.contracts.map((c) => c.address);
    runId = await startRun(warehouse.db, { job: job.name, command, contracts });
    const { head, source } = await resolveHead(deps.rpc, deps.transfers, contracts);
    logger.info({ msg: 'run started', job: job.name, run: runId, head, headFrom: source });

    // the ledger keeps up while the run works, so a killed run still shows what it did
    ledgerTimer = setInterval(() => {
      flush();
      ledgerWrite = ledgerWrite.then(() => recordRun(warehouse.db, runId!, totals)).catch(() => undefined);
    }, LEDGER_EVERY_MS);
    const phase = (ranges: RangeState[], resumed: boolean) => processRanges(deps, job, runId!, ranges, totals, lock, resumed);

    // first the ranges an earlier run left open (it was killed, or failed part-way) …
    const resumed = await openRanges(warehouse.db, job.name);
    const summaries: RangeSummary[] = resumed.length ? await phase(resumed, true) : [];
    // … then the plan: a follow-the-head contract always re-reads its last `finality` blocks up to the
    // head (blocks a resumed range read before a reorg included); an explicit range just resumed is done
    const lastCovered = await lastCoveredBlocks(warehouse.db, job.name, contracts);
    const planned = job.contracts.filter((c) => c.toBlock === undefined || !resumed.some((r) => r.contract === c.address));
    const plan = planRun({
      contracts: planned,
      head,
      finality: job.finality,
      // chunks of different contracts run side by side too: 2 × concurrency chunks in all keeps every
      // worker busy while bounding the extra (partial last page) requests that the chunks cost
      chunks: 2 * job.concurrency,
      lastCovered,
    });
    for (const note of plan.notes) logger[note.level]({ msg: note.message, job: job.name, contract: note.contract });
    const ranges: RangeState[] = [];
    for (const r of plan.ranges) {
      ranges.push(await createRange(warehouse.db, { job: job.name, contract: r.contract, fromBlock: r.fromBlock, toBlock: r.toBlock, runId, chunks: r.chunks }));
    }
    const all = [...resumed, ...ranges];
    if (all.length) {
      await setRunSpan(warehouse.db, runId, Math.min(...all.map((r) => r.fromBlock)), Math.max(...all.map((r) => r.toBlock)));
    }
    summaries.push(...(await phase(ranges, false)));
    totals.rowsRemoved = summaries.reduce((a, s) => a + s.removed, 0);
    await stopLedgerTimer();
    flush();
    await recordRun(warehouse.db, runId, totals, { status: 'succeeded' });
    if (deps.metrics) {
      const covered = await lastCoveredBlocks(warehouse.db, job.name, contracts);
      for (const [contract, block] of covered) deps.metrics.lag(job.name, contract, Math.max(0, head - block));
      deps.metrics.runEnded(job.name, 'succeeded', deps.clock.now() / 1000);
    }
    const ms = deps.clock.now() - started;
    logger.info({ msg: 'run finished', job: job.name, run: runId, ...totals, ms });
    return { runId, job: job.name, head, ranges: summaries, totals, ms };
  } catch (caught) {
    const err = explain(caught);
    const message = deps.endpoint.redact(err instanceof Error ? err.message : String(err));
    await stopLedgerTimer();
    deps.metrics?.runEnded(job.name, 'failed', deps.clock.now() / 1000);
    if (runId !== undefined) {
      flush();
      await recordRun(warehouse.db, runId, totals, { status: 'failed', error: message }).catch((e: unknown) =>
        logger.error({ msg: 'could not record the failed run', job: job.name, err: (e as Error).message }),
      );
    }
    throw err;
  } finally {
    clearInterval(ledgerTimer);
    untrack?.();
    deps.progress.stop();
    await lock.release().catch(() => undefined);
  }
}

const LEDGER_EVERY_MS = 5_000;

/** JSON-RPC POSTs of headers in flight while pages are read: the pages keep the larger share of the connections. */
const HEADER_POSTS_ALONGSIDE = 2;

/**
 * Read (fetching the headers of each committed page alongside) → reconcile, for a set of ranges: the
 * finished ranges are closed together at the end. Ranges an earlier run left open may hold pages whose
 * headers that run never fetched, so their blocks are also searched for missing headers afterwards.
 */
async function processRanges(
  deps: RunDeps,
  job: Readonly<JobConfig>,
  runId: string,
  ranges: RangeState[],
  totals: RunTotals,
  lock: JobLock,
  resumed: boolean,
): Promise<RangeSummary[]> {
  if (!ranges.length) return [];
  const headers = createHeaderQueue(deps, { job: job.name, runId, batchSize: deps.rpc.batchSize ?? 100, concurrency: HEADER_POSTS_ALONGSIDE });
  try {
    await readRanges(deps, job, runId, ranges, totals, lock, headers);
    const stored = await headers.drain();
    totals.headersFetched += stored;
    deps.metrics?.headersStored(job.name, stored);
  } catch (err) {
    await headers.settle();
    throw err;
  }
  await lock.ensure();
  if (resumed) {
    const stored = await enrichRanges(deps, { job: job.name, runId, concurrency: job.concurrency, ranges });
    totals.headersFetched += stored;
    deps.metrics?.headersStored(job.name, stored);
  }
  await lock.ensure();
  // ranges resumed from an earlier run may hold rows that run updated
  const reconciled = await reconcileRanges(deps.warehouse.db, ranges, runId, resumed || totals.rowsUpdated > 0);
  for (const r of ranges) deps.metrics?.removed(job.name, r.contract, reconciled.get(r.id)?.removed ?? 0);
  return ranges.map((r) => ({
    contract: r.contract,
    fromBlock: r.fromBlock,
    toBlock: r.toBlock,
    rows: reconciled.get(r.id)?.rows ?? 0,
    removed: reconciled.get(r.id)?.removed ?? 0,
  }));
}

async function readRanges(
  deps: RunDeps,
  job: Readonly<JobConfig>,
  runId: string,
  ranges: RangeState[],
  totals: RunTotals,
  lock: JobLock,
  headers: HeaderQueue,
) {
  // the first chunk that fails stops the others after their current page; so does losing the job's lock
  const stop = new AbortController();
  lock.onLost((err) => stop.abort(err));
  const tokensSaved = new Set<string>();
  for (const range of ranges) {
    const span = range.toBlock - range.fromBlock + 1;
    deps.progress.start(range.contract, range.contract.slice(0, 10), span);
    const already = range.chunks.reduce(
      (sum, c) => sum + (c.done ? c.toBlock - c.fromBlock + 1 : c.resumeToBlock === null ? 0 : c.toBlock - c.resumeToBlock),
      0,
    );
    if (already) deps.progress.advance(range.contract, already, 0);
  }
  const items = ranges.flatMap((range) => range.chunks.filter((chunk) => !chunk.done).map((chunk) => ({ range, chunk })));
  await runChunks(
    items,
    { concurrency: job.concurrency, pageSize: job.pageSize, maxSplits: job.concurrency, signal: stop.signal },
    async ({ range, chunk }, split) => {
      const started = deps.clock.now();
      await readChunk(
        deps,
        { job: job.name, runId, contract: range.contract, pageSize: job.pageSize, chunk, signal: stop.signal, split },
        { onPage: onCommittedPage(deps, { job: job.name, runId, contract: range.contract, totals, headers, tokensSaved }) },
      ).catch((err: unknown) => {
        stop.abort(err);
        throw err;
      });
      if (chunk.done) deps.metrics?.chunkDone(job.name, range.contract, (deps.clock.now() - started) / 1000);
    },
    ({ range, chunk }) => range.chunks.push(chunk),
  );
  if (stop.signal.aborted) throw stop.signal.reason;
}

/** A raw PostgreSQL error (outside the page loads, which retry their own) becomes one that says what happened. */
function explain(err: unknown): unknown {
  if (err instanceof EtlError) return err;
  const e = err as { code?: string; message?: string; severity?: string };
  const classified = classifyPgError(err);
  if (classified !== err || (typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code))) {
    const what = classified instanceof Error && classified !== err ? classified.message : `${e.message} (SQLSTATE ${e.code})`;
    return new FatalError(`PostgreSQL failed during the run: ${what}. Everything committed is kept; run the job again to finish it.`, { cause: err });
  }
  return err;
}
