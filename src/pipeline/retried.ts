import type { Logger } from 'pino';
import type { Clock } from '../common/clock.ts';
import { retryStatement } from '../warehouse/statement-retry.ts';

/**
 * Warehouse work of a run that can be run again whole (a read, an idempotent write, a transaction of its own), retried
 * as `retryStatement` does on a restart, a dropped connection or a deadlock (about a minute), each retry logged with the
 * job and what the work was; `stop` (the run's stop signal) ends the waits. So a PostgreSQL restart costs a run a wait, not the run, wherever it catches it.
 *
 * @example const resumed = await retried(deps, job.name, 'reading open ranges', () => openRanges(db, chain, job.name));
 */
export function retried<T>(deps: { clock: Clock; logger: Logger }, job: string, what: string, work: () => Promise<T>, stop?: AbortSignal): Promise<T> {
  return retryStatement(work, {
    clock: deps.clock,
    // a run stopped by a signal does not wait out a minute of retries
    signal: stop,
    onRetry: (err, attempt) => deps.logger.warn({ msg: `PostgreSQL failed while ${what}; trying again`, job, attempt, err: err.message }),
  });
}
