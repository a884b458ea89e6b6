import type { Logger } from 'pino';
import type { Source } from '../source/source.ts';
import type { Warehouse } from '../warehouse/db.ts';
import { addToRun, emptyTotals, type RunTotals } from '../warehouse/runs.ts';

/** How often a working run's totals reach the warehouse: a killed run loses at most this much of them. */
const LEDGER_EVERY_MS = 5_000;

export interface RunLedger {
  /** What this process did for the run so far: the runner adds rows, headers and removals to it. */
  readonly totals: RunTotals;
  /** Adds what is new since the last write to the run's row, and waits for it. */
  flush(): Promise<void>;
  /** Stops the timer after a last flush. */
  stop(): Promise<void>;
}

/**
 * Keeps a run's row in export_runs up to date while work goes on, every few seconds and when stopped: each
 * write adds what is new since the last one, so any number of processes (a run, or a run's workers) can add
 * their share to one run. The source's requests, retries and rate limits are counted in.
 */
export function startRunLedger(deps: { warehouse: Warehouse; logger: Logger }, scope: { runId: string; counters: Source['counters'] }): RunLedger {
  const totals = emptyTotals();
  const added = emptyTotals();
  let writing: Promise<void> = Promise.resolve();
  const add = () => {
    totals.apiRequests = scope.counters.transferRequests + scope.counters.rpcPosts;
    totals.retries = scope.counters.retries;
    totals.rateLimited = scope.counters.rateLimited;
    const delta = emptyTotals();
    let changed = false;
    for (const key of Object.keys(delta) as (keyof RunTotals)[]) {
      delta[key] = totals[key] - added[key];
      added[key] = totals[key];
      changed ||= delta[key] !== 0;
    }
    if (!changed) return writing;
    writing = writing
      .then(() => addToRun(deps.warehouse.db, scope.runId, delta))
      .catch((err: unknown) => {
        // not added: the next write carries it again
        for (const key of Object.keys(delta) as (keyof RunTotals)[]) added[key] -= delta[key];
        deps.logger.warn({ msg: 'could not add to the run totals; the next write will', run: scope.runId, err: (err as Error).message });
      });
    return writing;
  };
  const timer = setInterval(add, LEDGER_EVERY_MS);
  timer.unref();
  return {
    totals,
    flush: add,
    async stop() {
      clearInterval(timer);
      await add();
    },
  };
}
