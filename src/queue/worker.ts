import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { parseCronItems, run, runOnce, type Runner, type RunnerOptions, type TaskList, type WorkerEvents } from 'graphile-worker';
import type { Logger } from 'pino';
import type { Clock } from '../common/clock.ts';
import { EtlError, FatalError, isRetryable, RetryableError } from '../common/errors.ts';
import { jobChain, type JobConfig } from '../config/job-schema.ts';
import { type JobSeries, jobSeries } from '../metrics/job-series.ts';
import type { RunMetrics } from '../metrics/run-metrics.ts';
import type { Source } from '../source/source.ts';
import { createQueuePool, type Warehouse } from '../warehouse/db.ts';
import { ChunkStoppedError } from '../warehouse/load-page.ts';
import { warehouseGaveUp } from '../warehouse/statement-retry.ts';
import { failRun } from '../warehouse/runs.ts';
import { heldTasks, waitingTasksBesides } from '../warehouse/queue-status.ts';
import { giveBackTasks, type LeftTask } from '../warehouse/queue-tasks.ts';
import { checkEndpointChain } from '../pipeline/chain-guard.ts';
import { ChunkInterruptedError, EndpointChainChangedError, requireStartedChain, runChunkTask } from './chunk-task.ts';
import { enqueueJob } from './enqueue.ts';
import { graphileLogger } from './graphile-logger.ts';
import { startHeartbeats } from './heartbeats.ts';
import { chainOfTask, chainTasks, chunkPayload, enqueuePayload, parsePayload, TASK_PREFIX } from './payloads.ts';

export interface WorkerDeps {
  databaseUrl: string;
  /** The chain this worker's endpoint serves (its eth_chainId): it takes that chain's tasks only. */
  chainId: number;
  warehouse: Warehouse;
  logger: Logger;
  clock: Clock;
  /** A source for one task of a job, with the job's requests-per-second limit. */
  source(job: Readonly<JobConfig>): Source;
  /** Takes the project id out of a message before it is logged or stored in the queue. */
  redact(text: string): string;
  metrics?: RunMetrics;
}

export interface WorkerOptions {
  /** Tasks run at once. */
  concurrency: number;
  /** Stop when no task is ready, instead of waiting for more. */
  once: boolean;
  /** A worker not heard from for this long is taken for dead, and its tasks go to other workers. */
  leaseSeconds: number;
  /** Jobs whose `schedule` this worker's crontab fires (with `--schedule`); empty without. */
  scheduled: readonly Readonly<JobConfig>[];
}

/**
 * `erc20-etl worker`: runs queued chunk tasks (and, with a schedule, the crontab that enqueues jobs) with
 * graphile-worker until stopped (SIGINT/SIGTERM stop it gracefully: running chunks stop after their page)
 * or, with `once`, until no task is ready.
 */
export async function runWorker(deps: WorkerDeps, options: WorkerOptions): Promise<void> {
  const { logger } = deps;
  const worker = `${hostname()}:${process.pid}`;
  const tokensSaved = new Set<string>();
  const heartbeats = startHeartbeats({ warehouse: deps.warehouse, logger, leaseSeconds: options.leaseSeconds });
  const events: WorkerEvents = new EventEmitter() as WorkerEvents;
  // graphile-worker 0.17 locks tasks under the pool's id; its workers' ids are kept too (they stay until the
  // process stops, so a stopping worker hands back whatever is locked under any of them)
  events.on('worker:create', ({ worker: w }) => heartbeats.add(w.workerId));
  // graphile-worker failing to use the queue itself (PostgreSQL restarting under it): a --once worker's runner then ends
  // as if the queue were empty, so the failure is kept to end the command with it; a continuous one asks again
  let queueFailure: string | undefined;
  const queueFailed = (error: unknown) => {
    const message = deps.redact(error instanceof Error ? error.message : String(error));
    queueFailure ??= message;
    logger.error({ msg: 'graphile-worker could not use the queue', worker, err: message });
  };
  if (options.once) events.on('worker:getJob:error', ({ error }) => queueFailed(error));
  events.on('worker:fatalError', ({ error }) => queueFailed(error));
  events.on('pool:fatalError', ({ error }) => queueFailed(error));
  events.on('pool:create', ({ workerPool }) => heartbeats.add(workerPool.id));
  events.on('pool:listen:success', () => logger.info({ msg: 'worker listening for tasks', worker }));
  // every worker sees an entry come due; the queue lets one of them add its task (known_crontabs)
  events.on('cron:schedule', ({ timestamp, jobsAndIdentifiers }) =>
    logger.info({ msg: 'schedule due', at: new Date(timestamp).toISOString(), entries: jobsAndIdentifiers.map((j) => j.identifier) }),
  );
  // a worker that starts within the hour after a due time still fires it (once, as ever), if the queue knew the
  // schedule then (graphile-worker back-fills only entries it knew: a schedule is known from its first worker's start).
  // Asked at start for every due time of that hour, fired already or not: the queue adds only those no worker fired
  events.on('cron:backfill', ({ timestamp, itemsToBackfill }) =>
    logger.info({ msg: 'schedule was due within the hour: enqueued now unless a worker fired it then', at: timestamp, entries: itemsToBackfill.map((j) => j.identifier) }),
  );

  const tasks = chainTasks(deps.chainId);
  // the endpoint turned out to serve another chain (asked again by each task): the worker takes no task more
  let chainChanged: EndpointChainChangedError | undefined;
  let runner: Runner | undefined;
  // the tasks this process took and left unread for that reason, as it last left them (a --once worker takes a task
  // again after its back-off), given back once the runner has ended (`giveBack`)
  const untouched = new Map<string, LeftTask & { takes: number }>();
  const endpointChanged = (err: EndpointChainChangedError, task: TakenTask) => {
    const seen = untouched.get(task.id);
    const takes = seen && seen.revision === task.revision ? seen.takes + 1 : 1;
    untouched.set(task.id, { id: task.id, attempts: task.attempts, revision: task.revision, key: task.key, takes, restore: Math.max(0, task.attempts - takes) });
    if (chainChanged) return;
    chainChanged = err;
    logger.error({ msg: 'stopping: the endpoint serves another chain now', worker, chain: deps.chainId, served: String(err.served) });
    runner?.stop('the endpoint serves another chain').catch((e: unknown) => logger.error({ msg: 'the worker did not stop cleanly', err: (e as Error).message }));
  };
  // a task taken after the endpoint turned (a --once worker takes every ready one) is left at once, unasked; one that
  // finds the turn itself has it noted for the rest
  const unlessTurned = async (left: string, task: TakenTask, work: () => Promise<void>) => {
    try {
      if (chainChanged) throw new EndpointChainChangedError(deps.chainId, chainChanged.served, left);
      await work();
    } catch (err) {
      if (err instanceof EndpointChainChangedError) endpointChanged(err, task);
      throw err;
    }
  };
  /** Tasks of this process that failed: given up (retrying cannot help), or left for a later attempt. */
  const failures: Failures = { givenUp: [], retrying: new Set() };
  // a stop (SIGINT, SIGTERM) ends running chunks after their page: each is no failure of its task, which is given back
  // once the runner has ended with the attempts and last error it had when this worker took it (`giveBack`)
  let stopping = false;
  const stopped = new Map<string, LeftTask>();
  // (a chunk whose lock's connection dropped is interrupted too: that is a failure, its signal not the stop's)
  const stopInterrupted = (err: unknown, task: TakenTask & { last_error: string | null }, signal: AbortSignal) => {
    if (!stopping || !signal.aborted || !(err instanceof ChunkInterruptedError)) return false;
    stopped.set(task.id, { id: task.id, attempts: task.attempts, revision: task.revision, key: task.key, restore: Math.max(0, task.attempts - 1), lastError: task.last_error });
    return true;
  };
  const taskList: TaskList = {
    [tasks.chunk]: (payload, helpers) =>
      guarded(deps, failures, { task: tasks.chunk, id: helpers.job.id, stopped: (err) => stopInterrupted(err, helpers.job, helpers.abortSignal) }, async (scope) => {
        const task = parsePayload(chunkPayload, payload, tasks.chunk);
        Object.assign(scope, { job: task.job.name, series: jobSeries(task.job), runId: task.runId });
        await unlessTurned(`chunk ${task.chunkId}`, helpers.job, () => runChunkTask({ ...deps, tokensSaved, worker }, task, helpers.abortSignal));
      }),
    [tasks.enqueue]: (payload, helpers) =>
      guarded(deps, failures, { task: tasks.enqueue, id: helpers.job.id }, async (scope) => {
        const { job } = parsePayload(enqueuePayload, payload, tasks.enqueue);
        scope.job = job.name;
        const left = `the scheduled enqueue of job "${job.name}"`;
        await unlessTurned(left, helpers.job, async () => {
          const source = deps.source(job);
          try {
            // as a chunk task does (the job's own chain is checked next)
            await requireStartedChain(source, deps.chainId, left);
            const chainId = await checkEndpointChain({ ...deps, source }, job);
            const { head } = await source.chainHead(job.contracts.map((c) => c.address));
            await enqueueJob(deps, job, head, 'schedule', chainId);
          } finally {
            await source.close().catch(() => undefined);
          }
        });
      }),
  };
  const parsedCronItems = parseCronItems(
    options.scheduled.map((job) => ({
      // fired here, run by a worker of the job's chain
      task: chainTasks(jobChain(job).chain).enqueue,
      match: job.schedule!,
      // the identifier is what makes an entry fire once across workers: every worker names a job alike
      identifier: `erc20-etl:${job.name}`,
      payload: { job },
      // the back-fill period: see 'cron:backfill' above
      options: { backfillPeriod: 3_600_000, jobKey: `erc20-etl:enqueue:${job.name}`, maxAttempts: 5 },
    })),
  );
  for (const job of options.scheduled) logger.info({ msg: 'schedule loaded', job: job.name, schedule: job.schedule });

  const pgPool = createQueuePool({ databaseUrl: deps.databaseUrl, logger, maxConnections: options.concurrency + 3 });
  const runnerOptions: RunnerOptions = {
    pgPool,
    concurrency: options.concurrency,
    pollInterval: 1_000,
    taskList,
    parsedCronItems,
    events,
    // graphile-worker's 'Failed task' line for a task the stop interrupted says what it is instead
    logger: graphileLogger(logger, (taskId) => stopped.has(taskId)),
  };
  logger.info({ msg: 'worker started', worker, chain: deps.chainId, concurrency: options.concurrency, once: options.once, scheduled: options.scheduled.length });
  await sayOtherChainsTasks(deps, tasks);
  try {
    if (options.once) {
      // tasks of workers gone past --dead-after go back to the queue before this worker looks for ready ones
      await heartbeats.sweep();
      // the runner itself may end with graphile-worker's failure to use the queue (its fatal errors, collected)
      const ended = await runOnce(runnerOptions).then(
        () => undefined,
        (error: unknown) => error,
      );
      if (chainChanged) throw new FatalError(chainChanged.message);
      if (ended !== undefined) queueFailed(ended);
      if (queueFailure !== undefined) {
        throw new FatalError(
          `worker --once stopped before the queue was empty: graphile-worker could not use PostgreSQL (${queueFailure}). The tasks left wait on the queue (any this worker held come back after --dead-after); run \`erc20-etl worker --once\` again.`,
        );
      }
      // a batch that left work undone must not look like success to cron
      if (failures.givenUp.length || failures.retrying.size) throw new OnceFailedError(failures.givenUp, failures.retrying.size);
      await sayHeldElsewhere(deps, tasks, options.leaseSeconds, heartbeats.ids());
    } else {
      runner = await run({ ...runnerOptions, noHandleSignals: true });
      // a task may have found the chain changed while the runner started
      if (chainChanged) await runner.stop('the endpoint serves another chain');
      await untilStopped(runner, logger, () => {
        stopping = true;
      });
      if (chainChanged) throw new FatalError(chainChanged.message);
    }
  } finally {
    await heartbeats.stop();
    // after the tasks still locked under this process's ids are handed back, unlocked with their attempt counted
    if (chainChanged) await giveBack('untouched', [...untouched.values()], deps);
    await giveBack('stopped', [...stopped.values()], deps);
    await pgPool.end();
    logger.info({ msg: 'worker stopped', worker });
  }
}

/** Why tasks are given back, as the give-back's log lines say it. */
const GIVE_BACK_WORDS = {
  untouched: { what: 'the tasks left unread', after: 'a worker of their chain takes them at once' },
  stopped: { what: 'the tasks the stop interrupted', after: 'the next worker takes them at once' },
} as const;

/**
 * Gives back tasks this worker took and left (`giveBackTasks`), each as it was before this worker's takes of it, ready
 * at once: `untouched`, those left unread because its endpoint serves another chain now (their attempts; their
 * `last_error` stays), so a worker of their chain reads them without a back-off; `stopped`, the chunk tasks a stop
 * (SIGINT, SIGTERM) interrupted after a page, which graphile-worker counted as failed (an attempt, a back-off, the stop
 * as their last error: each gets its attempts and last error back). One that changed meanwhile (another worker took or
 * finished it, `enqueue` replaced it) is left as it is. Best effort: a worker killed first, or a give-back PostgreSQL
 * refuses, gives nothing back, and each task keeps the attempts it took.
 */
async function giveBack(why: keyof typeof GIVE_BACK_WORDS, left: readonly LeftTask[], deps: WorkerDeps): Promise<void> {
  const { logger } = deps;
  const { what, after } = GIVE_BACK_WORDS[why];
  if (!left.length) return;
  const given = await giveBackTasks(deps.warehouse.db, left).catch((err: unknown) => {
    logger.warn({ msg: `could not give back ${what}: each keeps the attempts it took`, tasks: left.length, err: (err as Error).message });
    return undefined;
  });
  if (given === undefined) return;
  if (given.length) logger.info({ msg: `gave back ${what}, each as it was before this worker took it: ${after}`, tasks: given.length });
  if (given.length < left.length) {
    logger.info({
      msg: `${what} that changed since (another worker took or finished them, enqueue replaced them, or they are still locked): left as they are`,
      tasks: left.length - given.length,
    });
  }
}

/**
 * Waits for the runner, stopping it gracefully on SIGINT or SIGTERM (`onStop` told first): running chunks stop after
 * their page (at most 5 s later), the runner ends, and the caller hands back what is still locked (heartbeats' stop)
 * and gives back the tasks the stop interrupted (`giveBack`) before the process ends with exit 0. A second
 * signal ends the process at once. graphile-worker's own handlers would end the process by re-raising the signal
 * first, leaving the stopped tasks locked until `--dead-after`.
 */
async function untilStopped(runner: Runner, logger: Logger, onStop: () => void): Promise<void> {
  const stop = (signal: NodeJS.Signals) => {
    onStop();
    logger.info({ msg: 'stopping: running chunks stop after their page, and their tasks go back to the queue', signal });
    runner.stop(`${signal} received`).catch((err: unknown) => logger.error({ msg: 'the worker did not stop cleanly', err: (err as Error).message }));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await runner.promise;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

/** What a task's work tells `guarded` of itself as it learns it: the job (for logs), its series (for metrics) and the run. */
interface TaskScope {
  job?: string;
  series?: JobSeries;
  runId?: string;
}

/** A task as graphile-worker hands it over: what a give-back checks it by. */
type TakenTask = { id: string; attempts: number; revision: number; key: string | null };

/** The tasks of this process that failed: given up (each named), or waiting for another attempt (by queue id; one that later succeeds leaves). */
interface Failures {
  givenUp: string[];
  retrying: Set<string>;
}

/**
 * Runs a task's work so that what reaches graphile-worker (its log, the queue's last_error) never holds the
 * project id, and a failure that a retry cannot fix ends the task instead of coming back 25 times: it is
 * logged and, for a chunk, its run is marked failed; the next `enqueue` of the job queues the chunk again.
 */
async function guarded(
  deps: WorkerDeps,
  failures: Failures,
  { task, id, stopped }: { task: string; id: string; stopped?: (err: unknown) => boolean },
  work: (scope: TaskScope) => Promise<unknown>,
): Promise<void> {
  const scope: TaskScope = {};
  try {
    await work(scope);
    failures.retrying.delete(id);
  } catch (err) {
    failures.retrying.delete(id);
    const message = deps.redact(err instanceof Error ? err.message : String(err));
    if (stopped?.(err)) {
      // no failure: graphile-worker releases the task as failed, and the worker gives it back as it was
      deps.logger.info({ msg: 'task stopped after its page as the worker stops; it goes back to the queue', job: scope.job, task, err: message });
      throw new RetryableError(message);
    }
    if (taskTriedAgain(err)) {
      deps.logger.warn({ msg: 'task failed; it will be tried again', job: scope.job, task, err: message });
      failures.retrying.add(id);
      throw new RetryableError(message);
    }
    deps.logger.error({ msg: 'task failed; retrying cannot help, so it ends here', job: scope.job, task, err: message });
    failures.givenUp.push(`${scope.job === undefined ? task : `job "${scope.job}"`}: ${message}`);
    if (scope.runId !== undefined && scope.series !== undefined) {
      if (await failRun(deps.warehouse.db, scope.runId, message)) deps.metrics?.runEnded(scope.series, 'failed', deps.clock.now() / 1000);
    }
  }
}

/**
 * Says, when a `worker --once` ends, the tasks of its chain other workers still hold: their work is not done, and if
 * such a worker is gone (killed), its tasks come back to the queue only once it has not been heard from for
 * `--dead-after`, so a batch that ends now must run again later. A warning: another `--once` worker of the same
 * batch still at work holds tasks as well, rightly.
 */
async function sayHeldElsewhere(deps: WorkerDeps, own: { chunk: string; enqueue: string }, leaseSeconds: number, ownIds: readonly string[]): Promise<void> {
  const held = await heldTasks(deps.warehouse.db, [own.chunk, own.enqueue], ownIds).catch((err: unknown) => {
    deps.logger.debug({ msg: 'could not count the tasks other workers hold', err: (err as Error).message });
    return undefined;
  });
  if (!held?.held) return;
  const silent = held.silentSeconds === null ? 'one never heard from' : `the longest not heard from for ${Math.round(held.silentSeconds)} s`;
  deps.logger.warn({
    msg: `worker --once ends with ${held.held} task(s) of chain ${deps.chainId} held by other workers (${silent}): they finish them; the tasks of a worker that is gone go back to the queue once it has not been heard from for --dead-after (${leaseSeconds} s), and the next worker takes them: run \`erc20-etl worker --once\` again after that`,
    held: held.held,
    leaseSeconds,
  });
}

/**
 * Says which tasks of other chains wait on the queue, which this worker never takes (its endpoint serves another chain),
 * so a worker that finds nothing to do says why the queue is not empty. Info, not a warning: with a worker for each
 * chain this is how it should be.
 */
async function sayOtherChainsTasks(deps: WorkerDeps, own: { chunk: string; enqueue: string }): Promise<void> {
  const others = await waitingTasksBesides(deps.warehouse.db, TASK_PREFIX, [own.chunk, own.enqueue]).catch((err: unknown) => {
    deps.logger.debug({ msg: "could not count other chains' tasks on the queue", err: (err as Error).message });
    return [];
  });
  const byChain = new Map<number, number>();
  for (const { task, waiting } of others) {
    const chain = chainOfTask(task);
    if (chain !== undefined) byChain.set(chain, (byChain.get(chain) ?? 0) + waiting);
  }
  if (!byChain.size) return;
  deps.logger.info({
    msg: "tasks of other chains wait on the queue: this worker takes its endpoint's chain's only, a worker whose CHAIN_API_URL serves theirs takes them",
    chain: deps.chainId,
    waiting: Object.fromEntries(byChain),
  });
}

/**
 * Whether a task that failed with `err` goes back to the queue to be tried again (else it ends, and its run is marked
 * failed). An error of no known kind is a bug or a surprise of a library: worth another try before giving up. An error
 * that stopped a chunk's writer so that no page counts twice (`ChunkStoppedError`: a chunk another worker took over, a
 * COMMIT nobody could tell about) is safe for a task started anew, which reads the chunk where the warehouse has it.
 *
 * @example taskTriedAgain(new ChunkMovedError(['7'])) // → true
 * taskTriedAgain(new FatalError('bad job file')) // → false
 */
export function taskTriedAgain(err: unknown): boolean {
  // PostgreSQL away for longer than a statement's retries: the queue's own backoff waits longer
  return err instanceof ChunkStoppedError || !(err instanceof EtlError) || isRetryable(err) || warehouseGaveUp(err);
}

/**
 * `worker --once` ran out of ready tasks after some failed: exit 1 (a batch job's cron sees it), naming each task
 * given up and how many wait for a later attempt.
 */
class OnceFailedError extends FatalError {
  constructor(givenUp: readonly string[], retrying: number) {
    const parts = [
      givenUp.length ? `${givenUp.length} task(s) failed and were given up (retrying cannot help; their runs are marked failed)` : '',
      retrying ? `${retrying} task(s) failed an attempt and stay in the queue, to be tried again later (or given up after their last attempt)` : '',
    ].filter(Boolean);
    super(
      [
        `worker --once stopped with work undone: ${parts.join('; ')}.`,
        ...givenUp.map((line) => `  ${line}`),
        givenUp.length
          ? 'Fix what each says, then run the job again (erc20-etl run, or enqueue it again); `erc20-etl status` shows each run.'
          : 'The log says why each attempt failed; run `erc20-etl worker --once` again later (`erc20-etl status` shows the queue).',
      ].join('\n'),
      { details: { givenUp: givenUp.length, retrying } },
    );
  }
}
