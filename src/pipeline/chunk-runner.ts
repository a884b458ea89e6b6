import type { TimeBudget } from '../common/time-budget.ts';
import type { Logger } from 'pino';
import { setMaxListeners } from 'node:events';
import type { Clock } from '../common/clock.ts';
import type { JobConfig } from '../config/job-schema.ts';
import { jobSeries } from '../metrics/job-series.ts';
import type { RunMetrics } from '../metrics/run-metrics.ts';
import type { Source } from '../source/source.ts';
import { lastCoveredBlocks } from '../warehouse/coverage.ts';
import { GROUP_MAX_AGE_MS } from '../warehouse/copy-group.ts';
import { openCopyLanes } from '../warehouse/copy-lanes.ts';
import type { Warehouse } from '../warehouse/db.ts';
import type { RangeState } from '../warehouse/ranges.ts';
import { commitTrace } from '../warehouse/commit-trace.ts';
import { contractsWithTransfers, forkedBlocks, LookupIndexesPending, reconcileRanges } from '../warehouse/reconcile.ts';
import { mergeSpans } from '../common/spans.ts';
import { interleave, runChunks } from './chunk-scheduler.ts';
import { contractLag } from './contract-lag.ts';
import { enrichRanges } from './enrich.ts';
import type { HeaderPolicy } from './header-policy.ts';
import { createHeaderQueue } from './header-queue.ts';
import { onCommittedPage } from './page-events.ts';
import type { Progress } from './progress.ts';
import { readChunk } from './read-chunk.ts';
import { retried } from './retried.ts';
import type { RunLedger } from './run-ledger.ts';

/** What reading chunks needs, whoever asks for it: `run`, `backfill` or a queued task. */
export interface RunnerDeps {
  warehouse: Warehouse;
  source: Source;
  logger: Logger;
  clock: Clock;
  metrics?: RunMetrics;
  progress?: Progress;
  /** Where the run's time goes (`--time-budget`); nothing is kept without it. */
  budget?: TimeBudget;
}

export interface ChunkWork {
  job: Readonly<JobConfig>;
  runId: string;
  /** The ranges to work on: their unfinished chunks are read (or, with `chunkId`, that one alone). */
  ranges: RangeState[];
  chunkId?: string;
  /** The ranges were left open by an earlier attempt, which may have committed pages whose headers it never fetched. */
  resumed: boolean;
  ledger: RunLedger;
  /** Contracts whose token metadata this process has saved already. */
  tokensSaved: Set<string>;
  /** How the headers are checked and kept (the job's chain's rule, `verifyHeaders`): one per run, or per queued task. */
  headers: HeaderPolicy;
  /** Chunks read at once, and how many times running chunks may give blocks to idle connections. */
  concurrency: number;
  maxSplits: number;
  /** Once aborted, every chunk stops after its current page. */
  signal?: AbortSignal;
  /** The error to end with when stopped (by `signal`, or another chunk's failure) before the work was done. */
  stopped(reason: unknown): unknown;
}

export interface RangeSummary {
  contract: string;
  fromBlock: number;
  toBlock: number;
  rows: number;
  removed: number;
}

/** JSON-RPC POSTs of headers in flight while pages are read: the pages keep the larger share of the connections. */
const HEADER_POSTS_ALONGSIDE = 2;

/**
 * The one chunk runner: reads chunks (each page committed with its position; headers of each committed
 * page fetched alongside, each block once), then fetches the headers that are still missing, and for
 * resumed ranges those an earlier attempt never fetched. The first chunk that fails stops the others
 * after their current page. Adds rows and headers to the ledger's totals and to the metrics.
 */
export async function readRanges(deps: RunnerDeps, work: ChunkWork): Promise<void> {
  const { job, runId, ranges, ledger } = work;
  const totals = ledger.totals;
  const series = jobSeries(job);
  // headers count in the ledger and the metrics as they are stored: a run that stops or fails counts those it stored
  const onStored = (n: number) => {
    totals.headersFetched += n;
    deps.metrics?.headersStored(series, n);
  };
  const headers = createHeaderQueue(deps, {
    job: job.name,
    runId,
    headers: work.headers,
    batchSize: deps.source.headerBatchSize,
    concurrency: HEADER_POSTS_ALONGSIDE,
    onStored,
  });
  // fresh chunks' pages go through the run's COPY lanes (at most two), each lane's transaction committed once it holds
  // its share of `commitRows` (at most the share and a page more) or after a second
  const lanes = openCopyLanes(deps.warehouse, deps, { commitRows: job.commitRows, concurrency: work.concurrency, maxAgeMs: GROUP_MAX_AGE_MS });
  const stop = new AbortController();
  // every chunk read at once waits on it for its next page, and a statement retried listens to it while it waits: as
  // many listeners as chunks and more, each removed as its wait ends (Node warns of a leak past 10)
  setMaxListeners(0, stop.signal);
  const outer = work.signal;
  const onOuter = () => stop.abort(outer?.reason);
  if (outer?.aborted) onOuter();
  else outer?.addEventListener('abort', onOuter, { once: true });
  try {
    showProgress(deps, ranges);
    // the contracts' chunks over the same blocks side by side: a node source reads them with one call
    const items = interleave(
      ranges.map((range) => range.chunks.filter((chunk) => !chunk.done && (work.chunkId === undefined || chunk.id === work.chunkId)).map((chunk) => ({ range, chunk }))),
    );
    await runChunks(
      items,
      { concurrency: work.concurrency, pageSize: job.pageSize, maxSplits: work.maxSplits, signal: stop.signal },
      async ({ range, chunk }, split) => {
        const started = deps.clock.now();
        await readChunk(
          { ...deps, lanes },
          { job: job.name, runId, contract: range.contract, pageSize: job.pageSize, chunk, signal: stop.signal, split },
          { onPage: onCommittedPage(deps, { job: job.name, chainId: series.chain, runId, contract: range.contract, totals, headers, tokensSaved: work.tokensSaved }) },
        ).catch((err: unknown) => {
          stop.abort(err);
          throw err;
        });
        if (chunk.done) deps.metrics?.chunkDone(series, range.contract, (deps.clock.now() - started) / 1000);
      },
      ({ range, chunk }) => range.chunks.push(chunk),
    );
    await lanes.close();
    if (stop.signal.aborted) throw work.stopped(stop.signal.reason);
    await headers.drain();
  } catch (err) {
    await lanes.close().catch(() => undefined);
    await headers.settle();
    throw err;
  } finally {
    outer?.removeEventListener('abort', onOuter);
  }
  if (work.resumed) {
    await enrichRanges(deps, { job: job.name, runId, headers: work.headers, concurrency: Math.max(work.concurrency, HEADER_POSTS_ALONGSIDE), ranges, onStored });
  }
}

/** Progress bars start where the ranges stand: an earlier attempt may have read part of them. */
function showProgress(deps: RunnerDeps, ranges: readonly RangeState[]): void {
  if (!deps.progress) return;
  for (const range of ranges) {
    deps.progress.start(range.contract, range.contract.slice(0, 10), range.toBlock - range.fromBlock + 1);
    const already = range.chunks.reduce((sum, c) => sum + (c.done ? c.toBlock - c.fromBlock + 1 : c.resumeToBlock === null ? 0 : c.toBlock - c.resumeToBlock), 0);
    if (already) deps.progress.advance(range.contract, already, 0);
  }
}

/** What closing ranges uses of a runner's dependencies. */
type CloseDeps = Pick<RunnerDeps, 'warehouse' | 'logger' | 'clock' | 'metrics'>;

/**
 * Closes finished ranges: reconciles them (rows their pages found gone are archived, their coverage
 * recorded; a range is closed once, whoever else tries), adds the removals to the ledger and the metrics,
 * and updates each contract's lag behind the head. Resolves to the ranges this call closed, by id.
 */
export async function closeRanges(
  deps: CloseDeps,
  scope: {
    job: Readonly<JobConfig>;
    runId: string;
    ranges: readonly RangeState[];
    head: number;
    ledger: Pick<RunLedger, 'totals'>;
    mayHaveUpdates: boolean;
    /**
     * Given while a first load builds its lookup indexes: resolves once they stand. The ranges close beside the builds,
     * or, where closing them needs the indexes (`LookupIndexesPending`), once they stand.
     */
    lookupIndexes?: () => Promise<void>;
  },
): Promise<Map<string, RangeSummary>> {
  const { job, ranges } = scope;
  // one trace for the close's attempts: a retry after a lost COMMIT answer reads what the committed attempt closed
  const trace = commitTrace(deps.clock);
  const reconcile = (indexesPending: boolean) =>
    retried(deps, job.name, 'closing ranges', () => reconcileRanges(deps.warehouse.db, ranges, scope.runId, scope.mayHaveUpdates, trace, indexesPending));
  const reconciled = await reconcile(scope.lookupIndexes !== undefined).catch(async (err: unknown) => {
    if (!(err instanceof LookupIndexesPending) || !scope.lookupIndexes) throw err;
    await scope.lookupIndexes();
    return reconcile(false);
  });
  const closed = new Map<string, RangeSummary>();
  for (const r of ranges) {
    const done = reconciled.get(r.id);
    if (!done) continue;
    scope.ledger.totals.rowsRemoved += done.removed;
    deps.metrics?.removed(jobSeries(job), r.contract, done.removed);
    closed.set(r.id, { contract: r.contract, fromBlock: r.fromBlock, toBlock: r.toBlock, rows: done.rows, removed: done.removed });
  }
  await reportLag(deps, job, [...new Set([...closed.values()].map((s) => s.contract))], scope.head);
  await warnOfForks(
    deps,
    job,
    ranges.filter((r) => closed.has(r.id)),
  );
  return closed;
}

/** Contracts named in the backfill a fork warning suggests; beyond them it says how many more. */
const FORK_CONTRACTS_NAMED = 20;

/**
 * Warns when the blocks of the ranges just closed hold transfers of two forks (two canonical headers at one height),
 * naming the blocks and the backfill that reads them again: every contract with transfers from `finality` blocks below
 * the first such height (a reorg replaces every block from its fork point up, which may lie below it: heights where
 * only one fork has transfers show nothing) to the end of the blocks closed. Nothing else can: the source cannot be
 * asked which fork each row came from without reading them again.
 */
async function warnOfForks(deps: CloseDeps, job: Readonly<JobConfig>, ranges: readonly RangeState[]): Promise<void> {
  const chain = jobSeries(job).chain;
  for (const span of mergeSpans(ranges)) {
    const forked = await retried(deps, job.name, 'looking for blocks of two forks', () => forkedBlocks(deps.warehouse.db, chain, span));
    if (!forked) continue;
    const again = { fromBlock: Math.max(0, forked.first - job.finality), toBlock: span.toBlock };
    const { contracts, total } = await retried(deps, job.name, 'listing the contracts of blocks of two forks', () =>
      contractsWithTransfers(deps.warehouse.db, chain, again, FORK_CONTRACTS_NAMED),
    );
    const flags = contracts.map((c) => `--contract ${c}`).join(' ');
    const more = total > contracts.length ? ` (and the same for the ${total - contracts.length} other contract(s) with transfers there)` : '';
    deps.logger.warn({
      msg:
        `blocks ${forked.first}–${forked.last} of chain ${chain} hold transfers of two forks (${forked.blocks} block number(s) with two canonical headers): ` +
        `rows read before a reorg stand beside rows read after it. A later run reads only the newest ${job.finality} blocks again (finality), so read these again, ` +
        `from ${job.finality} blocks below them (the fork may begin lower): erc20-etl backfill --chain ${chain} ${flags} --from ${again.fromBlock} --to ${again.toBlock}${more}; ` +
        'the rows the chain no longer has move to token_transfers_removed.',
      job: job.name,
      chain,
      fromBlock: forked.first,
      toBlock: forked.last,
      blocks: forked.blocks,
    });
  }
}

/** Sets each contract's lag metric (`contractLag`) from the last block its coverage on the job's chain reaches. */
export async function reportLag(deps: CloseDeps, job: Readonly<JobConfig>, contracts: readonly string[], head: number): Promise<void> {
  if (!deps.metrics || !contracts.length) return;
  const series = jobSeries(job);
  const covered = await retried(deps, job.name, 'reading coverage', () => lastCoveredBlocks(deps.warehouse.db, series.chain, job.name, contracts));
  const ends = new Map(job.contracts.map((c) => [c.address, c.toBlock]));
  for (const contract of contracts) deps.metrics.lag(series, contract, contractLag(head, ends.get(contract), covered.get(contract)));
}
