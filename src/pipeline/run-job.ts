import { NO_BUDGET } from '../common/time-budget.ts';
import { jobChain, type JobConfig } from '../config/job-schema.ts';
import type { ApiEndpoint } from '../config/api-url.ts';
import { jobSeries } from '../metrics/job-series.ts';
import { tryJobLock, type JobLock } from '../warehouse/job-lock.ts';
import { createRange, openRanges, type RangeState } from '../warehouse/ranges.ts';
import { endRun, failAbandonedRuns, setRunSpan, startRun, type RunTotals } from '../warehouse/runs.ts';
import { coveredBounds } from '../warehouse/coverage.ts';
import { JobLockedError } from './errors.ts';
import { ConfigError, EtlError, FatalError } from '../common/errors.ts';
import { lacksPrivilege, transientPgFailure } from '../warehouse/pg-errors.ts';
import { warehouseGaveUp } from '../warehouse/statement-retry.ts';
import { planRun } from './plan.ts';
import type { Progress } from './progress.ts';
import { closeRanges, readRanges, reportLag, type RangeSummary, type RunnerDeps } from './chunk-runner.ts';
import { checkEndpointChain, checkJobNameChain } from './chain-guard.ts';
import { retried } from './retried.ts';
import { buildLookupIndexes, prepareLookupIndexes, unbuiltAdvice } from './lookup-indexes.ts';
import { startRunLedger, type RunLedger } from './run-ledger.ts';
import { createHeaderPolicy, type HeaderPolicy } from './header-policy.ts';

export type { RangeSummary } from './chunk-runner.ts';

export interface RunDeps extends RunnerDeps {
  endpoint: Pick<ApiEndpoint, 'redact'>;
  progress: Progress;
  /** Once aborted (a signal asked the process to stop), the run stops after each chunk's current page and fails with the reason. */
  stop?: AbortSignal;
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
  const lock = await tryJobLock(warehouse, job.name);
  if (!lock) throw new JobLockedError(job.name);
  const untrack = deps.metrics?.trackSource(deps.source.counters);
  let runId: string | undefined;
  let ledger: RunLedger | undefined;
  try {
    // before anything is written (the lock is released on the way out): the endpoint serves the job's chain. An
    // endpoint that cannot say (down, refusing the key) fails the run as before, in its ledger; another chain stops
    // it with nothing written.
    const guard = await checkEndpointChain(deps, job, command === 'backfill' ? 'flag' : 'file').then(
      (chainId) => ({ chainId, error: undefined }),
      (error: unknown) => {
        if (error instanceof ConfigError) throw error;
        return { chainId: jobChain(job).chain, error };
      },
    );
    await checkJobNameChain(warehouse.db, job, guard.chainId);
    const again = <T>(what: string, work: () => Promise<T>) => retried(deps, job.name, what, work, deps.stop);
    const abandoned = await again('ending abandoned runs', () => failAbandonedRuns(warehouse.db, guard.chainId, job.name));
    if (abandoned) logger.warn({ msg: 'earlier runs of this job ended without finishing; resuming their work', job: job.name, runs: abandoned });
    const contracts = job.contracts.map((c) => c.address);
    // started when the command began, before the endpoint's chain was asked (retries of an endpoint that is down included)
    runId = await again('recording the run', () => startRun(warehouse.db, { chainId: guard.chainId, job: job.name, command, contracts, startedAt: new Date(started) }));
    // the ledger keeps up while the run works, so a killed run still shows what it did
    ledger = startRunLedger(deps, { runId, source: deps.source });
    // the endpoint could not say which chain it serves: the run fails, its ledger saying why (and what it tried)
    if (guard.error !== undefined) throw guard.error;
    const { head, from } = await deps.source.chainHead(contracts);
    logger.info({ msg: 'run started', job: job.name, run: runId, head, headFrom: from });
    // one for the whole run: a header the chain's rule cannot verify is said once, however many phases store some
    const headers = createHeaderPolicy(job, logger);
    const phase = (ranges: RangeState[], resumed: boolean) => processRanges(deps, job, { runId: runId!, ranges, head, ledger: ledger!, lock, resumed, headers });

    // first the ranges an earlier run left open (it was killed, or failed part-way) …
    const resumed = await again('reading open ranges', () => openRanges(warehouse.db, guard.chainId, job.name));
    const summaries: RangeSummary[] = resumed.length ? await phase(resumed, true) : [];
    // … then the plan: a follow-the-head contract always re-reads its last `finality` blocks up to the
    // head (blocks a resumed range read before a reorg included); an explicit range just resumed is done
    const covered = await again('reading coverage', () => coveredBounds(warehouse.db, guard.chainId, job.name, contracts));
    const planned = job.contracts.filter((c) => c.toBlock === undefined || !resumed.some((r) => r.contract === c.address));
    const plan = planRun({
      contracts: planned,
      head,
      finality: job.finality,
      // chunks of different contracts run side by side too: 2 × concurrency chunks in all keeps every
      // worker busy while bounding the extra (partial last page) requests that the chunks cost
      chunks: 2 * job.concurrency,
      lastCovered: covered.last,
      firstCovered: covered.first,
    });
    for (const note of plan.notes) logger[note.level]({ msg: note.message, job: job.name, contract: note.contract });
    const ranges: RangeState[] = [];
    for (const r of plan.ranges) {
      ranges.push(
        await again('planning a range', () =>
          createRange(warehouse.db, { chainId: guard.chainId, job: job.name, contract: r.contract, fromBlock: r.fromBlock, toBlock: r.toBlock, runId: runId!, chunks: r.chunks }),
        ),
      );
    }
    const all = [...resumed, ...ranges];
    if (all.length) {
      const span = [Math.min(...all.map((r) => r.fromBlock)), Math.max(...all.map((r) => r.toBlock))] as const;
      await again("recording the run's blocks", () => setRunSpan(warehouse.db, runId!, ...span));
    }
    summaries.push(...(await phase(ranges, false)));
    await (deps.budget ?? NO_BUDGET).time('commit', async () => {
      await ledger!.stop();
      await again('ending the run', () => endRun(warehouse.db, runId!, { status: 'succeeded' }));
    });
    await reportLag(deps, job, contracts, head);
    deps.metrics?.runEnded(jobSeries(job), 'succeeded', deps.clock.now() / 1000);
    const ms = deps.clock.now() - started;
    logger.info({ msg: 'run finished', job: job.name, run: runId, ...ledger.totals, ms });
    return { runId, job: job.name, head, ranges: summaries, totals: ledger.totals, ms };
  } catch (caught) {
    const err = explain(caught);
    const message = deps.endpoint.redact(err instanceof Error ? err.message : String(err));
    // what was committed counts, whether or not the run got to the end
    await ledger?.stop();
    deps.metrics?.runEnded(jobSeries(job), 'failed', deps.clock.now() / 1000);
    if (runId !== undefined) {
      await endRun(warehouse.db, runId, { status: 'failed', error: message }).catch((e: unknown) =>
        logger.error({ msg: 'could not record the failed run', job: job.name, err: (e as Error).message }),
      );
    }
    throw err;
  } finally {
    untrack?.();
    deps.progress.stop();
    await lock.release().catch(() => undefined);
  }
}

/**
 * Reads a set of ranges with the chunk runner, then closes them together, beside the builds of the lookup indexes a
 * first load deferred. Losing the job's lock stops every chunk after its current page.
 */
async function processRanges(
  deps: RunDeps,
  job: Readonly<JobConfig>,
  scope: { runId: string; ranges: RangeState[]; head: number; ledger: RunLedger; lock: JobLock; resumed: boolean; headers: HeaderPolicy },
): Promise<RangeSummary[]> {
  const { ranges, lock, ledger } = scope;
  if (!ranges.length) return [];
  deps.stop?.throwIfAborted();
  const lost = new AbortController();
  lock.onLost((err) => lost.abort(err));
  const indexes = await prepareLookupIndexes(deps, job, { runId: scope.runId, defer: !job.keepIndexes }, deps.stop);
  const reading = readRanges(deps, {
    job,
    runId: scope.runId,
    ranges,
    resumed: scope.resumed,
    ledger,
    tokensSaved: new Set(),
    headers: scope.headers,
    concurrency: job.concurrency,
    maxSplits: job.concurrency,
    signal: deps.stop ? AbortSignal.any([lost.signal, deps.stop]) : lost.signal,
    stopped: (reason) => reason,
  });
  // built whether or not the chunks were all read: a run that stops or fails leaves none unbuilt that it can build
  await reading.catch(async (err: unknown) => {
    await buildLookupIndexes(deps, job, scope.runId, indexes, deps.stop?.aborted ? 'stopped' : 'failed').catch((e: unknown) =>
      deps.logger.error({ msg: unbuiltAdvice(e), job: job.name, run: scope.runId }),
    );
    throw err;
  });
  // the chunks are read: the ranges close while the indexes are built, each taking a core the other leaves idle (a
  // close that needs the indexes waits for them). A build that fails fails the run, whose ranges may be closed by then:
  // the indexes stay recorded as unbuilt, for the next run or `migrate`.
  const building = buildLookupIndexes(deps, job, scope.runId, indexes);
  // before a close, and again before one that waited for the builds (minutes on a large table): not stopped, the job's lock held
  const mayClose = async () => {
    deps.stop?.throwIfAborted();
    await lock.ensure();
  };
  const closing = (async () => {
    await mayClose();
    // ranges resumed from an earlier run may hold rows that run updated
    const mayHaveUpdates = scope.resumed || ledger.totals.rowsUpdated > 0;
    const built = async () => {
      await building;
      await mayClose();
    };
    const close = { job, runId: scope.runId, ranges, head: scope.head, ledger, mayHaveUpdates, ...(indexes.deferred.length && { lookupIndexes: built }) };
    return (deps.budget ?? NO_BUDGET).time('commit', () => closeRanges(deps, close));
  })();
  const [builds, close] = await Promise.allSettled([building, closing]);
  // a failed build first: a close that waited for it failed with it
  if (builds.status === 'rejected') throw builds.reason;
  if (close.status === 'rejected') throw close.reason;
  const closed = close.value;
  return ranges.map((r) => closed.get(r.id) ?? { contract: r.contract, fromBlock: r.fromBlock, toBlock: r.toBlock, rows: 0, removed: 0 });
}

/**
 * A raw PostgreSQL error becomes one that says what happened and what to do; so does one that its retries (about a
 * minute) could not get past.
 */
function explain(err: unknown): unknown {
  // the warehouse's retries, not the API's (an unreachable API fails with ECONNREFUSED too)
  if (warehouseGaveUp(err)) {
    return new FatalError(
      `PostgreSQL did not come back within about a minute of retries (${err.attempts} attempts; last: ${err.lastError.what}). Everything committed is kept; once it answers, run the job again to finish it.`,
      { cause: err },
    );
  }
  if (err instanceof EtlError) return err;
  const e = err as { code?: string; message?: string; severity?: string };
  const transient = transientPgFailure(err);
  if (lacksPrivilege(err)) {
    return new FatalError(
      `PostgreSQL refused the run: ${e.message} (SQLSTATE 42501): the role of DATABASE_URL lacks a privilege the run needs, and running again as it cannot help. ` +
        'Grant what README "Database privileges" lists (as the role that owns the warehouse), then run the job again; everything committed is kept.',
      { cause: err },
    );
  }
  if (transient !== undefined || (typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code))) {
    const what = transient ?? `${e.message} (SQLSTATE ${e.code})`;
    return new FatalError(`PostgreSQL failed during the run: ${what}. Everything committed is kept; run the job again to finish it.`, { cause: err });
  }
  return err;
}
