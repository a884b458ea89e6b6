import type { TimeBudget } from '../common/time-budget.ts';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Clock } from '../common/clock.ts';
import { withRetry } from '../common/retry.ts';
import type { Warehouse } from './db.ts';
import { AlreadyLoadedError, ChunkStoppedError, chunksMoved, CommitFailedError, loadPage, type MergeCounts, type PageLoad } from './load-page.ts';
import { holdConnection } from './held-connection.ts';
import { brokenConnection, classifyPgError } from './pg-errors.ts';
import { setFresh, type ChunkState } from './ranges.ts';
import { DB_RETRY } from './statement-retry.ts';

/**
 * Whether the transaction of these pages, whose COMMIT failed, committed all the same (every chunk stands where it
 * moved them), asked on a pool connection of its own and retried as a page is; undefined when that cannot be read.
 */
export function committedAnyway(pool: pg.Pool, loads: readonly Pick<PageLoad, 'chunkId' | 'rows' | 'start' | 'checkpoint'>[], clock: Clock): Promise<boolean | undefined> {
  return withRetry(
    () =>
      chunksMoved(pool, loads).catch((err: unknown) => {
        throw classifyPgError(err);
      }),
    { ...DB_RETRY, clock },
  ).catch(() => undefined);
}

/**
 * A COMMIT of pages failed and the warehouse could not be asked afterwards whether it committed: written again, pages
 * that did commit would move their chunks back and count twice, so nothing is written again and the run stops.
 */
export class CommitUnknownError extends ChunkStoppedError {
  constructor(chunks: readonly string[], cause: unknown) {
    super(
      chunks,
      (which) =>
        `The COMMIT of pages of ${which} failed (${(cause as Error)?.message ?? String(cause)}) and the warehouse did not answer for about a minute after, so whether it committed is unknown; nothing was written again. Once PostgreSQL answers, run the job again: it resumes from what is committed.`,
      cause,
    );
  }
}

export interface PageWriter {
  /** Commits one page with the chunk's new position; a deadlock or a lost connection costs a retry of the page. */
  write(load: Omit<PageLoad, 'mode'>): Promise<MergeCounts>;
  /** Gives the connection back (reset), or drops it when it broke. */
  close(): Promise<void>;
}

/**
 * The warehouse session of one chunk: one connection held from page to page (the staging table and the
 * session's settings stay set up), taken on the first write. A page COPYs while the chunk is fresh (its
 * blocks held no row when it started); when a row is there after all, the chunk merges from then on.
 */
export function openPageWriter(
  warehouse: Warehouse,
  deps: { logger: Logger; clock: Clock; budget?: TimeBudget | undefined },
  scope: { job: string; contract: string; chunk: ChunkState },
): PageWriter {
  const { chunk } = scope;
  const held = holdConnection(warehouse.pool, deps.clock);

  const loadOn = async (into: pg.PoolClient, load: Omit<PageLoad, 'mode'>): Promise<MergeCounts> => {
    try {
      return await loadPage(into, { ...load, mode: chunk.fresh ? 'copy' : 'merge' }, deps.budget);
    } catch (err) {
      if (!(err instanceof AlreadyLoadedError)) throw err;
      // another job loaded these blocks meanwhile, or the chunk re-reads a block: merge from now on
      deps.logger.info({ msg: err.message, job: scope.job, contract: scope.contract, chunk: chunk.id });
      await setFresh(warehouse.db, chunk, false);
      return loadPage(into, { ...load, mode: 'merge' }, deps.budget);
    }
  };

  return {
    write: (load) =>
      withRetry(
        async () => {
          const client = await held.get();
          try {
            return await loadOn(client, load);
          } catch (err) {
            // a lost connection's backend is ended first: it may hold the page's rows and its chunk's row locked
            if (brokenConnection(err) || held.broken()) await held.drop(err as Error);
            if (!(err instanceof CommitFailedError)) throw classifyPgError(err);
            // its answer may have been lost after it committed: written again, the page would count as unchanged
            const committed = await committedAnyway(warehouse.pool, [load], deps.clock);
            if (committed) return err.counts;
            if (committed === undefined) throw new CommitUnknownError([load.chunkId], err.cause);
            throw classifyPgError(err.cause);
          }
        },
        {
          ...DB_RETRY,
          clock: deps.clock,
          onRetry: (err, attempt, delayMs) => deps.logger.warn({ msg: err.message, job: scope.job, contract: scope.contract, attempt, delayMs }),
        },
      ),
    close: () => held.close(),
  };
}
