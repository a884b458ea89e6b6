import type { Clock } from '../common/clock.ts';
import type { EtlError } from '../common/errors.ts';
import { RetriesExhaustedError, withRetry } from '../common/retry.ts';
import { classifyPgError, PgTransientError } from './pg-errors.ts';

/** Warehouse work retried on deadlocks, restarts and lost connections: about a minute in all, enough for a restart. */
export const DB_RETRY = { retries: 8, minDelayMs: 200, maxDelayMs: 15_000 };

/**
 * Runs warehouse work that can be run again whole (a read, or a transaction of its own) with the one retry policy:
 * a failure PostgreSQL can get past (`classifyPgError`: a restart, a dropped connection, a deadlock) is tried again
 * for about a minute; anything else is thrown at once. A `signal` that aborts during a wait ends the retries with its reason.
 *
 * @example const known = await retryStatement(() => knownHeaders(db, 1, blocks), { clock, onRetry: (err, attempt) => log.warn({ msg: err.message, attempt }) });
 */
export function retryStatement<T>(
  work: () => Promise<T>,
  options: { clock: Clock; onRetry?: (err: EtlError, attempt: number) => void; signal?: AbortSignal | undefined },
): Promise<T> {
  return withRetry(
    () =>
      work().catch((err: unknown) => {
        throw classifyPgError(err);
      }),
    { ...DB_RETRY, clock: options.clock, ...(options.onRetry && { onRetry: options.onRetry }), ...(options.signal && { signal: options.signal }) },
  );
}

/**
 * The warehouse's retries (about a minute) were spent on a failure PostgreSQL could have got past: it stayed away. The
 * API's retries, spent on a connection refused as well, are not this.
 *
 * @example warehouseGaveUp(await retryStatement(work, { clock }).catch((e) => e)) // → true while PostgreSQL is down
 */
export function warehouseGaveUp(err: unknown): err is RetriesExhaustedError & { lastError: PgTransientError } {
  return err instanceof RetriesExhaustedError && err.lastError instanceof PgTransientError;
}
