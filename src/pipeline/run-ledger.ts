import type { Clock } from '../common/clock.ts';
import type { Logger } from 'pino';
import type { SkippedLogCounts, Source } from '../source/source.ts';
import type { Warehouse } from '../warehouse/db.ts';
import { committedAttempt, commitTrace, type CommitTrace } from '../warehouse/commit-trace.ts';
import { addToRun, emptyTotals, type RunTotals } from '../warehouse/runs.ts';
import { recordSkippedLogs } from '../warehouse/skipped-logs.ts';

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
 * their share to one run. The source's requests, retries and rate limits are counted in, and the logs it
 * skipped (not ERC-20 transfers) per contract. The row counts are not added from here: each write sets them to what
 * the run's committed pages added in their own transactions (export_run_rows), exact after a kill too.
 */
export function startRunLedger(
  deps: { warehouse: Warehouse; logger: Logger; clock?: Clock },
  scope: { runId: string; source: Pick<Source, 'counters' | 'skippedLogs'> },
): RunLedger {
  const { counters } = scope.source;
  const totals = emptyTotals();
  const added = emptyTotals();
  const skippedAdded = new Map<string, SkippedLogCounts>();
  let writing: Promise<void> = Promise.resolve();
  // writes that failed: each is taken back once PostgreSQL says it did not commit (its answer may have been lost as it
  // did), so the next write carries it again and nothing counts twice
  const failed: { trace: CommitTrace; takeBack(): void }[] = [];
  const takeBackUncommitted = async () => {
    while (failed.length) {
      const committed = await committedAttempt(deps.warehouse.db, failed[0]!.trace).then(
        (xid) => xid !== undefined,
        (err: unknown) => {
          deps.logger.warn({
            msg: 'could not learn whether a failed ledger write (run totals or skipped logs) committed; asked again before the next write',
            run: scope.runId,
            err: (err as Error).message,
          });
          return undefined;
        },
      );
      // PostgreSQL cannot say yet: asked again before the next write
      if (committed === undefined) return;
      const write = failed.shift()!;
      if (!committed) write.takeBack();
    }
  };
  const add = () => {
    totals.apiRequests = counters.transferRequests + counters.rpcPosts;
    totals.retries = counters.retries;
    totals.rateLimited = counters.rateLimited;
    const warn = (err: unknown) => deps.logger.warn({ msg: 'could not add to the run totals; the next write will', run: scope.runId, err: (err as Error).message });
    writing = writing.then(async () => {
      await takeBackUncommitted();
      const delta = emptyTotals();
      let changed = false;
      for (const key of Object.keys(delta) as (keyof RunTotals)[]) {
        delta[key] = totals[key] - added[key];
        added[key] = totals[key];
        changed ||= delta[key] !== 0;
      }
      if (changed) {
        const trace = commitTrace(deps.clock);
        await addToRun(deps.warehouse.db, scope.runId, delta, trace).catch((err: unknown) => {
          failed.push({ trace, takeBack: () => subtractTotals(added, delta) });
          warn(err);
        });
      }
      const skipped = skippedSince(scope.source.skippedLogs(), skippedAdded);
      if (skipped.size) {
        const trace = commitTrace(deps.clock);
        await recordSkippedLogs(deps.warehouse.db, scope.runId, skipped, trace).catch((err: unknown) => {
          failed.push({ trace, takeBack: () => subtractSkipped(skippedAdded, skipped) });
          warn(err);
        });
      }
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
      // a write that failed (its answer lost, or PostgreSQL away a moment) is asked about, and written again, once more
      if (failed.length) await add();
      if (failed.length) {
        deps.logger.warn({
          msg: "the run's last ledger writes failed, and whether they committed is not known: its totals (export_runs, export_run_skipped_logs) may be short by them",
          run: scope.runId,
          writes: failed.length,
        });
      }
    },
  };
}

/** Takes a write of `delta` back from what the ledger has `added`: the next write carries it again. */
function subtractTotals(added: RunTotals, delta: RunTotals): void {
  for (const key of Object.keys(delta) as (keyof RunTotals)[]) added[key] -= delta[key];
}

/** Takes a write of skipped logs back from what the ledger has `added`: the next write carries it again. */
function subtractSkipped(added: Map<string, SkippedLogCounts>, delta: ReadonlyMap<string, SkippedLogCounts>): void {
  for (const [contract, d] of delta) {
    const was = added.get(contract)!;
    added.set(contract, { erc721: was.erc721 - d.erc721, other: was.other - d.other });
  }
}

/** What was skipped since the last write, per contract; `added` becomes what is written now. */
function skippedSince(now: ReadonlyMap<string, SkippedLogCounts>, added: Map<string, SkippedLogCounts>): Map<string, SkippedLogCounts> {
  const delta = new Map<string, SkippedLogCounts>();
  for (const [contract, c] of now) {
    const was = added.get(contract) ?? { erc721: 0, other: 0 };
    if (c.erc721 === was.erc721 && c.other === was.other) continue;
    delta.set(contract, { erc721: c.erc721 - was.erc721, other: c.other - was.other });
    added.set(contract, { ...c });
  }
  return delta;
}
