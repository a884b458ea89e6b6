import type { Logger } from 'pino';
import type { Clock } from '../common/clock.ts';
import type { RunMetrics } from '../metrics/run-metrics.ts';
import type { Source } from '../source/source.ts';
import type { Warehouse } from '../warehouse/db.ts';
import type { RunTotals } from '../warehouse/runs.ts';
import { saveToken } from '../warehouse/tokens.ts';
import type { HeaderQueue } from './header-queue.ts';
import type { Progress } from './progress.ts';
import type { ChunkEvents } from './read-chunk.ts';
import { retried } from './retried.ts';

export interface PageEventDeps {
  warehouse: Warehouse;
  source: Pick<Source, 'tokenMetadata'>;
  logger: Logger;
  clock: Clock;
  metrics?: RunMetrics;
  progress?: Progress;
}

export interface PageEventScope {
  job: string;
  /** The job's chain: its tokens' metadata is saved as this chain's. */
  chainId: number;
  runId: string;
  contract: string;
  totals: RunTotals;
  headers: HeaderQueue;
  /** Contracts whose token metadata this process has saved already. */
  tokensSaved: Set<string>;
}

/**
 * What happens after each committed page of a chunk, in a run or in a worker: totals, metrics and
 * progress count its rows, the token's metadata is saved once, the source's warnings are logged, and the
 * page's blocks go to the header queue.
 */
export function onCommittedPage(deps: PageEventDeps, scope: PageEventScope): ChunkEvents['onPage'] {
  const { job, chainId, contract, totals } = scope;
  return async (counts, blocks, page) => {
    totals.rowsInserted += counts.inserted;
    totals.rowsUpdated += counts.updated;
    totals.rowsUnchanged += counts.unchanged;
    deps.metrics?.page({ job, chain: chainId }, contract, counts);
    deps.progress?.advance(contract, blocks, page.transfers.length);
    // one address on two chains is two tokens
    const token = `${chainId}:${contract}`;
    if (!scope.tokensSaved.has(token)) {
      scope.tokensSaved.add(token);
      const metadata = await deps.source.tokenMetadata(contract);
      await retried(deps, job, "saving the token's metadata", () => saveToken(deps.warehouse.db, scope.chainId, metadata, scope.runId));
    }
    for (const warning of page.warnings) deps.logger.warn({ msg: warning, job, contract });
    await scope.headers.offer(page.transfers, contract, { bloomProven: page.bloomProven === true, ...(page.headersFetched && { fetched: page.headersFetched }) });
  };
}
