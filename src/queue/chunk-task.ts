import type { Logger } from 'pino';
import { RetryableError } from '../common/errors.ts';
import type { Clock } from '../common/clock.ts';
import type { JobConfig } from '../config/job-schema.ts';
import type { RunMetrics } from '../metrics/run-metrics.ts';
import { enrichRanges, type HeaderSource } from '../pipeline/enrich.ts';
import { createHeaderQueue } from '../pipeline/header-queue.ts';
import { onCommittedPage } from '../pipeline/page-events.ts';
import { readChunk, type PageSource } from '../pipeline/read-chunk.ts';
import type { SourceCounters } from '../source/counters.ts';
import { lastCoveredBlocks } from '../warehouse/coverage.ts';
import type { Warehouse } from '../warehouse/db.ts';
import { openRange, type RangeState } from '../warehouse/ranges.ts';
import { reconcileRanges } from '../warehouse/reconcile.ts';
import { addToRun, closeRunIfDone, countRequests, emptyTotals, type RunTotals } from '../warehouse/runs.ts';
import { tryTaskLock } from '../warehouse/task-lock.ts';
import type { ChunkPayload } from './payloads.ts';

/** The chain API's clients for one task, so the task's requests are counted apart from the others'. */
export interface TaskApi {
  transfers: PageSource;
  rpc: HeaderSource;
  counters: SourceCounters;
  close(): Promise<void>;
}

export interface ChunkTaskDeps {
  warehouse: Warehouse;
  logger: Logger;
  clock: Clock;
  metrics?: RunMetrics;
  api(job: Readonly<JobConfig>): TaskApi;
  /** Contracts whose token metadata this process has saved already. */
  tokensSaved: Set<string>;
  /** Names this process in logs, e.g. `host:pid`. */
  worker: string;
}

/** Another task holds the chunk, or `erc20-etl run` holds its job: graphile-worker tries again later. */
export class ChunkBusyError extends RetryableError {
  constructor(job: string, chunkId: string) {
    super(`Chunk ${chunkId} of job "${job}" is being read by another worker, or \`erc20-etl run\` holds the job; the task will be tried again.`);
  }
}

/** The task stopped part-way (the worker is shutting down, or its lock's connection dropped). */
export class ChunkInterruptedError extends RetryableError {}

/**
 * One queued chunk: read it to its end (pages committed with their positions, as `run` does), fetch the
 * headers its pages point at, add what it did to its run, and, when it was the range's last chunk,
 * reconcile and close the range. Safe to run again at any point: a chunk resumes from its committed
 * position, a finished one is not read twice, and a range is closed once.
 */
export async function runChunkTask(deps: ChunkTaskDeps, payload: ChunkPayload, signal?: AbortSignal): Promise<void> {
  const { job, chunkId, runId } = payload;
  const started = deps.clock.now();
  const lock = await tryTaskLock(deps.warehouse.pool, job.name, chunkId);
  if (!lock) throw new ChunkBusyError(job.name, chunkId);
  try {
    const range = await openRange(deps.warehouse.db, payload.rangeId);
    const chunk = range?.chunks.find((c) => c.id === chunkId);
    if (!range || !chunk) {
      deps.logger.info({ msg: 'chunk task skipped: its range is closed already', job: job.name, chunk: chunkId, worker: deps.worker });
      return;
    }
    const totals = emptyTotals();
    const wasDone = chunk.done;
    if (!chunk.done) await readTask(deps, payload, range, chunk.id, totals, AbortSignal.any([lock.signal, ...(signal ? [signal] : [])]));
    const rows = totals.rowsInserted + totals.rowsUpdated + totals.rowsUnchanged;
    if (!wasDone) deps.metrics?.chunkDone(job.name, range.contract, (deps.clock.now() - started) / 1000);
    deps.logger.info({ msg: wasDone ? 'chunk task found its chunk finished already' : 'chunk done', job: job.name, contract: range.contract, run: runId, chunk: chunkId, rows, ms: deps.clock.now() - started, worker: deps.worker });
    await closeRangeIfDone(deps, payload, range);
  } finally {
    await lock.release();
  }
}

async function readTask(deps: ChunkTaskDeps, payload: ChunkPayload, range: RangeState, chunkId: string, totals: RunTotals, stop: AbortSignal): Promise<void> {
  const { job, runId } = payload;
  const chunk = range.chunks.find((c) => c.id === chunkId)!;
  // an earlier attempt committed pages; the headers of those it never fetched are looked for afterwards
  const resumed = chunk.resumeToBlock !== null || chunk.pageKey !== null;
  const api = deps.api(job);
  const untrack = deps.metrics?.trackSource(api.counters);
  const source = { warehouse: deps.warehouse, transfers: api.transfers, rpc: api.rpc, logger: deps.logger, clock: deps.clock };
  // the run's totals keep up while the task works, so a worker killed mid-chunk loses at most a few seconds of them
  const ledger = runLedger(deps, runId, totals, api.counters);
  try {
    const headers = createHeaderQueue(source, { job: job.name, runId, batchSize: api.rpc.batchSize ?? 100, concurrency: 2 });
    try {
      await readChunk(
        source,
        { job: job.name, runId, contract: range.contract, pageSize: job.pageSize, chunk, signal: stop },
        { onPage: onCommittedPage(deps, { job: job.name, runId, contract: range.contract, totals, headers, tokensSaved: deps.tokensSaved }) },
      );
      if (!chunk.done) {
        throw new ChunkInterruptedError(
          `Chunk ${chunkId} of job "${job.name}" stopped after a committed page (${stop.reason instanceof Error ? stop.reason.message : 'the worker is stopping'}); the next attempt resumes it there.`,
        );
      }
      totals.headersFetched += await headers.drain();
    } catch (err) {
      await headers.settle();
      throw err;
    }
    if (resumed) totals.headersFetched += await enrichRanges(source, { job: job.name, runId, concurrency: 2, ranges: [range] });
    deps.metrics?.headersStored(job.name, totals.headersFetched);
  } finally {
    untrack?.();
    await api.close().catch(() => undefined);
    // what was committed counts, whether or not the task got to the end
    await ledger.stop();
  }
}

const LEDGER_EVERY_MS = 5_000;

/** Adds a task's totals to its run every few seconds and when stopped, each time what is new since the last. */
function runLedger(deps: ChunkTaskDeps, runId: string, totals: RunTotals, counters: SourceCounters) {
  const added = emptyTotals();
  let writing: Promise<void> = Promise.resolve();
  const add = () => {
    countRequests(totals, counters);
    const now = { ...totals };
    const delta = Object.fromEntries(Object.entries(now).map(([k, v]) => [k, v - added[k as keyof RunTotals]])) as unknown as RunTotals;
    Object.assign(added, now);
    if (Object.values(delta).every((v) => v === 0)) return;
    writing = writing
      .then(() => addToRun(deps.warehouse.db, runId, delta))
      .catch((err: unknown) => deps.logger.warn({ msg: 'could not add to the run totals', run: runId, err: (err as Error).message }));
  };
  const timer = setInterval(add, LEDGER_EVERY_MS);
  return {
    async stop() {
      clearInterval(timer);
      add();
      await writing;
    },
  };
}

/**
 * The task that finds every chunk of its range done reconciles the range (tasks finishing at once may both
 * try; the claim inside reconcileRanges lets one through), and closes the run when it was its last range.
 */
async function closeRangeIfDone(deps: ChunkTaskDeps, payload: ChunkPayload, range: RangeState): Promise<void> {
  const { db } = deps.warehouse;
  const left = await db.selectFrom('export_chunks').select(db.fn.countAll<string>().as('n')).where('range_id', '=', range.id).where('done', '=', false).executeTakeFirstOrThrow();
  if (Number(left.n) > 0) return;
  const reconciled = (await reconcileRanges(db, [range], payload.runId, true)).get(range.id);
  if (!reconciled) return;
  const { job } = payload;
  await addToRun(db, payload.runId, { ...emptyTotals(), rowsRemoved: reconciled.removed });
  deps.metrics?.removed(job.name, range.contract, reconciled.removed);
  const covered = await lastCoveredBlocks(db, job.name, [range.contract]);
  deps.metrics?.lag(job.name, range.contract, Math.max(0, payload.head - (covered.get(range.contract) ?? range.toBlock)));
  deps.logger.info({ msg: 'range complete', job: job.name, contract: range.contract, run: payload.runId, fromBlock: range.fromBlock, toBlock: range.toBlock, rows: reconciled.rows, removed: reconciled.removed });
  if (await closeRunIfDone(db, payload.runId)) {
    deps.metrics?.runEnded(job.name, 'succeeded', deps.clock.now() / 1000);
    deps.logger.info({ msg: 'run finished', job: job.name, run: payload.runId });
  }
}
