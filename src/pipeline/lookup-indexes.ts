import type { JobConfig } from '../config/job-schema.ts';
import { NO_BUDGET } from '../common/time-budget.ts';
import { prepareIndexes, rebuildDeferredIndexes, type IndexPlan } from '../warehouse/deferred-indexes.ts';
import type { RunnerDeps } from './chunk-runner.ts';
import { retried } from './retried.ts';

/** What the index steps of a run use of its dependencies. */
type IndexDeps = Pick<RunnerDeps, 'warehouse' | 'logger' | 'clock' | 'budget'>;

/**
 * What a run, a queued task or `migrate` says once it has waited a while (`WAIT_NOTICE_MS`) for the lock that the lookup
 * indexes' drops and builds take turns under: another session holds it, most likely to build them (which can take
 * minutes on a large table) or to drop them for its first load. Without it the wait would be silent.
 */
export const WAITING = "waiting for the lock on token_transfers' lookup indexes, which another session holds (a run, a task or migrate dropping or building them)";

const MIGRATE_AS_OWNER = 'run `erc20-etl migrate` as the role that owns the tables to build them';

/** What a run logs once it has built the indexes its first load deferred, with how long the builds took (`ms`). */
export const BUILT_LOOKUP_INDEXES = 'built the lookup indexes';

/**
 * Before a run reads its chunks: a first load into an empty token_transfers drops its lookup indexes, to build them
 * after its rows (unless `defer` is off: the job's `keepIndexes`, or a queued task, which reads one chunk); otherwise
 * indexes a first load dropped are built now (one that was stopped, or one still going: it goes on with them). A role
 * that cannot build them says so, and what to do. Logged either way.
 *
 * @example const plan = await prepareLookupIndexes(deps, job, { runId: '7', defer: !job.keepIndexes }, stop);
 */
export async function prepareLookupIndexes(deps: IndexDeps, job: Readonly<JobConfig>, o: { runId: string; defer: boolean }, stop?: AbortSignal): Promise<IndexPlan> {
  const started = deps.clock.now();
  const log = { job: job.name, run: o.runId };
  const onWait = () => deps.logger.info({ msg: WAITING, ...log });
  const plan = await retried(deps, job.name, 'preparing the lookup indexes', () => prepareIndexes(deps.warehouse.db, { ...o, onWait }), stop);
  if (plan.deferred.length) {
    deps.logger.info({
      msg: 'first load into an empty token_transfers: its lookup indexes are built after its rows',
      ...log,
      indexes: plan.deferred,
      ...(plan.autovacuumPaused && { autovacuum: 'paused till then' }),
    });
  }
  if (plan.kept) {
    // with some dropped by a first load stopped before its first row (the line above names them), it names the others
    const others = plan.deferred.length > 0;
    deps.logger.info({
      msg: `first load keeps ${others ? 'the other' : 'the'} lookup indexes up row by row`,
      ...log,
      reason: plan.kept,
      ...(plan.keptUp && { indexes: plan.keptUp }),
    });
  }
  if (plan.rebuilt.length) deps.logger.warn({ msg: 'built the lookup indexes a first load had dropped', ...log, indexes: plan.rebuilt, ms: deps.clock.now() - started });
  if (plan.autovacuumResumed) deps.logger.warn({ msg: 'resumed autovacuum on token_transfers, which a first load had paused', ...log });
  if (plan.unbuilt?.length) {
    // queries by block hash (closing a range) scan the whole table until they are built
    deps.logger.error({ msg: `lookup indexes a first load dropped are not built, and this role cannot build them: ${MIGRATE_AS_OWNER}`, ...log, indexes: plan.unbuilt });
  }
  return plan;
}

/**
 * Once the chunks are read (or the run stopped or failed): builds the indexes `prepareLookupIndexes` deferred, timed as
 * COPY work. A run that stops says it builds them first, since that can take a while on a large table.
 */
export async function buildLookupIndexes(deps: IndexDeps, job: Readonly<JobConfig>, runId: string, plan: IndexPlan, ending?: 'stopped' | 'failed'): Promise<void> {
  if (!plan.deferred.length) return;
  const log = { job: job.name, run: runId };
  if (ending) deps.logger.info({ msg: `the run ${ending}: building the lookup indexes its first load dropped before it ends`, ...log, indexes: plan.deferred });
  const started = deps.clock.now();
  const { built, resumed } = await (deps.budget ?? NO_BUDGET).time('copy', () =>
    retried(deps, job.name, 'building the lookup indexes', () => rebuildDeferredIndexes(deps.warehouse.db, { onWait: () => deps.logger.info({ msg: WAITING, ...log }) })),
  );
  // none: another run built them meanwhile, or this one's earlier attempt did (its answer was lost)
  if (built.length) deps.logger.info({ msg: BUILT_LOOKUP_INDEXES, ...log, indexes: built, ms: deps.clock.now() - started, ...(resumed && { autovacuum: 'resumed' }) });
}

/** What a run that could not build its lookup indexes says, with what to do. */
export function unbuiltAdvice(err: unknown): string {
  return `could not build the lookup indexes (${(err as Error).message}); the next run builds them, or ${MIGRATE_AS_OWNER}`;
}
