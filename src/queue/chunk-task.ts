import type { Logger } from 'pino';
import { FatalError, RetryableError } from '../common/errors.ts';
import type { Clock } from '../common/clock.ts';
import { jobChain, type JobConfig } from '../config/job-schema.ts';
import { jobSeries } from '../metrics/job-series.ts';
import type { RunMetrics } from '../metrics/run-metrics.ts';
import { closeRanges, readRanges, type RunnerDeps } from '../pipeline/chunk-runner.ts';
import { prepareLookupIndexes } from '../pipeline/lookup-indexes.ts';
import { createHeaderPolicy } from '../pipeline/header-policy.ts';
import { startRunLedger, type RunLedger } from '../pipeline/run-ledger.ts';
import type { Source } from '../source/source.ts';
import type { Warehouse } from '../warehouse/db.ts';
import { openRange, unfinishedChunks, type RangeState } from '../warehouse/ranges.ts';
import { closeRunIfDone } from '../warehouse/runs.ts';
import { tryTaskLock } from '../warehouse/task-lock.ts';
import type { ChunkPayload } from './payloads.ts';

export interface ChunkTaskDeps {
  warehouse: Warehouse;
  logger: Logger;
  clock: Clock;
  metrics?: RunMetrics;
  /** A source for one task of a job, so the task's requests are counted apart from the others'. */
  source(job: Readonly<JobConfig>): Source;
  /** Contracts whose token metadata this process has saved already. */
  tokensSaved: Set<string>;
  /** Names this process in logs, e.g. `host:pid`. */
  worker: string;
  /** The chain this worker's endpoint serves: the queue hands it that chain's tasks only (`chainTasks`). */
  chainId: number;
}

/** Another task holds the chunk, or `erc20-etl run` holds its job: graphile-worker tries again later. */
export class ChunkBusyError extends RetryableError {
  constructor(job: string, chunkId: string) {
    super(`Chunk ${chunkId} of job "${job}" is being read by another worker, or \`erc20-etl run\` holds the job; the task will be tried again.`);
  }
}

/**
 * The worker's endpoint serves another chain than it did when the worker started (a proxy, DNS or a provider's
 * settings changed behind the same URL): the task is left for a worker of its chain, untouched, and the worker stops.
 */
export class EndpointChainChangedError extends RetryableError {
  constructor(
    readonly started: number,
    readonly served: number | bigint,
    /** The task left: `chunk 42`, or `the scheduled enqueue of job "nightly"`. */
    left: string,
  ) {
    super(
      `CHAIN_API_URL now serves chain ${served}; this worker started on chain ${started} and takes chain ${started}'s tasks only, so ${left} was left untouched for a worker of chain ${started}. The worker stops: point CHAIN_API_URL at a chain ${started} endpoint and start it again.`,
    );
  }
}

/**
 * Asks the endpoint's chain again before a task of a worker started on chain `started` reads or writes anything: the
 * URL may serve another chain by now. Another chain throws `EndpointChainChangedError` naming the task `left`.
 */
export async function requireStartedChain(source: Pick<Source, 'chainId'>, started: number, left: string): Promise<void> {
  const served = await source.chainId();
  if (BigInt(served) !== BigInt(started)) throw new EndpointChainChangedError(started, served, left);
}

/** The task stopped part-way (the worker is shutting down, or its lock's connection dropped). */
export class ChunkInterruptedError extends RetryableError {}

/**
 * One queued chunk, read by the pipeline's chunk runner as `run` reads its chunks: to its end, with the
 * headers its pages point at, adding what it did to its run; when it was its range's last chunk, the range
 * is closed, and the run with it when that was the run's last range. Safe to run again at any point: a
 * chunk resumes from its committed position, a finished one is not read twice, and a range is closed once.
 */
export async function runChunkTask(deps: ChunkTaskDeps, payload: ChunkPayload, signal?: AbortSignal): Promise<void> {
  const { job, chunkId } = payload;
  const started = deps.clock.now();
  const source = deps.source(job);
  try {
    // asked first, before the task takes its lock or reads the warehouse: the URL the worker started with may serve
    // another chain by now, whose rows the task would file under its own chain (and whose absent blocks it would take
    // for a reorg's)
    await requireStartedChain(source, deps.chainId, `chunk ${chunkId}`);
    await readChunkTask(deps, payload, { source, started, ...(signal && { signal }) });
  } finally {
    await source.close().catch(() => undefined);
  }
}

/** The task's work once its endpoint is known to serve the task's chain: lock, read, close what it finished. */
async function readChunkTask(deps: ChunkTaskDeps, payload: ChunkPayload, task: { source: Source; started: number; signal?: AbortSignal }): Promise<void> {
  const { job, chunkId, runId } = payload;
  const { source, started, signal } = task;
  const lock = await tryTaskLock(deps.warehouse, job.name, chunkId);
  if (!lock) throw new ChunkBusyError(job.name, chunkId);
  try {
    const range = await openRange(deps.warehouse.db, payload.rangeId);
    const chunk = range?.chunks.find((c) => c.id === chunkId);
    if (!range || !chunk) {
      deps.logger.info({ msg: 'chunk task skipped: its range is closed already', job: job.name, chunk: chunkId, worker: deps.worker });
      // the attempt that closed the range may have failed before it closed the run (PostgreSQL restarting)
      await closeRun(deps, job, runId);
      return;
    }
    // the range's rows are its chain's: a job that says another (its warehouse relabelled by `migrate --chain-id` after
    // the task was queued) would file the chunk's headers and tokens under another chain than its transfers. The task
    // is named for the range's chain, so it reached a worker whose endpoint serves that chain (asked just now).
    const chain = jobChain(job).chain;
    if (range.chainId !== chain || deps.chainId !== chain) {
      throw new FatalError(
        `Chunk ${chunkId} of job "${job.name}" belongs to a range of chain ${range.chainId}, the task's job is for chain ${chain}, and this worker serves chain ${deps.chainId}; nothing was read. Run \`erc20-etl enqueue\` for the job again: it plans its own chain's ranges, for workers of that chain.`,
      );
    }
    const runner: RunnerDeps = { ...deps, source };
    const untrack = deps.metrics?.trackSource(source.counters);
    // the run's totals keep up while the task works, so a worker killed mid-chunk loses at most a few seconds of them
    const ledger = startRunLedger(deps, { runId, source });
    try {
      const wasDone = chunk.done;
      if (!wasDone) {
        await readRanges(runner, {
          job,
          runId,
          ranges: [range],
          chunkId,
          // an earlier attempt committed pages; the headers of those it never fetched are looked for afterwards
          resumed: chunk.resumeToBlock !== null || chunk.pageKey !== null,
          ledger,
          tokensSaved: deps.tokensSaved,
          // headers the job's chain's rule cannot verify are said once per task (each task is a process's part of the run)
          headers: createHeaderPolicy(job, deps.logger),
          concurrency: 1,
          maxSplits: 0,
          signal: AbortSignal.any([lock.signal, ...(signal ? [signal] : [])]),
          stopped: (reason) =>
            new ChunkInterruptedError(
              `Chunk ${chunkId} of job "${job.name}" stopped after a committed page (${reason instanceof Error ? reason.message : 'the worker is stopping'}); the next attempt resumes it there.`,
            ),
        });
      }
      const { totals } = ledger;
      const rows = totals.rowsInserted + totals.rowsUpdated + totals.rowsUnchanged;
      deps.logger.info({
        msg: wasDone ? 'chunk task found its chunk finished already' : 'chunk done',
        job: job.name,
        contract: range.contract,
        run: runId,
        chunk: chunkId,
        rows,
        ms: deps.clock.now() - started,
        worker: deps.worker,
      });
      await closeRangeIfDone(runner, payload, range, ledger);
    } finally {
      untrack?.();
      // what was committed counts, whether or not the task got to the end
      await ledger.stop();
    }
  } finally {
    await lock.release();
  }
}

/**
 * The task that finds every chunk of its range done closes the range (tasks finishing at once may both
 * try; one gets through), and the run when it was the run's last open range.
 */
async function closeRangeIfDone(deps: RunnerDeps, payload: ChunkPayload, range: RangeState, ledger: RunLedger): Promise<void> {
  const { job, runId } = payload;
  if ((await unfinishedChunks(deps.warehouse.db, range.id)) > 0) return;
  // closing reads by block hash: lookup indexes a first load dropped (a run's, stopped or still going) are built first
  await prepareLookupIndexes(deps, job, { runId, defer: false });
  const closed = (await closeRanges(deps, { job, runId, ranges: [range], head: payload.head, ledger, mayHaveUpdates: true })).get(range.id);
  // not closed by this call: another task closed it, or this task's own earlier attempt whose answer was lost (its
  // COMMIT went through as the connection broke); the run is closed all the same once none of its ranges is open
  if (closed) {
    deps.logger.info({
      msg: 'range complete',
      job: job.name,
      contract: range.contract,
      run: runId,
      fromBlock: range.fromBlock,
      toBlock: range.toBlock,
      rows: closed.rows,
      removed: closed.removed,
    });
  }
  // the run's totals hold this range's removals before the run is marked succeeded
  await ledger.flush();
  await closeRun(deps, job, runId);
}

/** Marks the queued run succeeded once none of its ranges is open (`closeRunIfDone`), saying so in the log and the metrics. */
async function closeRun(deps: Pick<ChunkTaskDeps, 'warehouse' | 'metrics' | 'logger' | 'clock'>, job: Readonly<JobConfig>, runId: string): Promise<void> {
  if (!(await closeRunIfDone(deps.warehouse.db, runId))) return;
  deps.metrics?.runEnded(jobSeries(job), 'succeeded', deps.clock.now() / 1000);
  deps.logger.info({ msg: 'run finished', job: job.name, run: runId });
}
