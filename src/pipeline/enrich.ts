import { NO_BUDGET, type TimeBudget } from '../common/time-budget.ts';
import pLimit from 'p-limit';
import type { Logger } from 'pino';
import type { Clock } from '../common/clock.ts';
import type { RunMetrics } from '../metrics/run-metrics.ts';
import { checkHeader, type CheckedHeader, type HeaderChecker } from '../source/header-check.ts';
import type { Warehouse } from '../warehouse/db.ts';
import { commitTrace, type CommitTrace } from '../warehouse/commit-trace.ts';
import { missingHeaders, rowsInBlocks, storeHeaders, type HeaderToStore, type MissingHeader } from '../warehouse/headers.ts';
import { bloomBytes } from '../eth/logs-bloom.ts';
import { createBloomCheck } from './bloom-check.ts';
import { RetryableError } from '../common/errors.ts';
import { RetriesExhaustedError, withRetry } from '../common/retry.ts';
import { blockDisagreementMessage, disagreeingFields } from '../dataset/block-agreement.ts';
import type { Source } from '../source/source.ts';
import { ChainDataError } from './errors.ts';
import { retried } from './retried.ts';
import type { HeaderPolicy } from './header-policy.ts';

export interface EnrichDeps {
  warehouse: Warehouse;
  source: Pick<Source, 'headersByHash' | 'checks'>;
  logger: Logger;
  clock: Clock;
  /** Counts the transfers checked against their block's logsBloom. */
  metrics?: Pick<RunMetrics, 'transfersBloomChecked'>;
  /** Where the run's time goes (`--time-budget`): headers fetched, checked and stored count as `headers`. */
  budget?: TimeBudget;
  /** How checked headers are written; `storeHeaders` into `warehouse` unless given. Resolves to the number stored. */
  storeHeaders?: (chainId: number, headers: readonly HeaderToStore[], runId: string, trace: CommitTrace) => Promise<number>;
}

/** Whose headers are fetched: the job, its run, and the run's header policy (the chain's rule, `verifyHeaders`). */
export interface HeaderScope {
  job: string;
  runId: string;
  headers: HeaderPolicy;
  /** Told as each group of headers is stored, how many: the run's ledger counts them then, so a run that stops later counts them too. */
  onStored?: (headers: number) => void;
}

/** A header that passed its checks, with the block it was fetched for, before it is stored. */
export interface VerifiedHeader<H extends MissingHeader> {
  block: H;
  checked: CheckedHeader;
}

/**
 * What must hold of verified headers before they are stored (the bloom check of their blocks' transfers): a
 * header whose block holds bad data is not stored, so the next run fetches it again and checks again.
 */
export type BeforeStoring<H extends MissingHeader> = (headers: readonly VerifiedHeader<H>[]) => Promise<void> | void;

/** Lookups that answer "not found" are asked again 5 times, after 0.2, 0.4, … 3.2 s (a lagging node behind a load balancer). */
const NOT_FOUND_RETRY = { retries: 5, minDelayMs: 200, maxDelayMs: 3_200 };
const GROUP = 500;

/**
 * Fetches, verifies and stores the header of every block that the transfers of the ranges point at and
 * that block_headers lacks: each once, in JSON-RPC batches. Resolves to the number stored. Every row the warehouse
 * holds in those blocks is checked against its block's logsBloom before the header is stored (`bloom-check.ts`):
 * rows an earlier attempt committed before it stopped, their headers not fetched, are checked so as those a run
 * reads are as their page's headers arrive (`header-queue.ts`).
 */
export async function enrichRanges(
  deps: EnrichDeps,
  scope: HeaderScope & { concurrency: number; ranges: readonly { contract: string; fromBlock: number; toBlock: number }[] },
): Promise<number> {
  const missing = await missingHeaders(deps.warehouse.db, scope.headers.chain, scope.ranges);
  for (const m of missing) {
    if (m.highest && disagreeingFields(m, m.highest).length) throw new ChainDataError(blockDisagreementMessage(m, m.highest));
  }
  const series = { job: scope.job, chain: scope.headers.chain };
  const blooms = createBloomCheck((n) => deps.metrics?.transfersBloomChecked(series, n));
  const beforeStoring: BeforeStoring<MissingHeader> = async (verified) => {
    const rows = await retried(deps, scope.job, 'reading the rows of blocks whose headers were missing', () =>
      rowsInBlocks(
        deps.warehouse.db,
        scope.headers.chain,
        verified.map((v) => v.block.hash),
      ),
    );
    const bloomOf = new Map(verified.map((v) => [v.block.hash, bloomBytes(v.checked.header.logsBloom!)]));
    // rows come ordered by block: each block's run of rows is checked against its bloom
    for (let from = 0; from < rows.length; ) {
      let to = from + 1;
      while (to < rows.length && rows[to]!.blockHash === rows[from]!.blockHash) to++;
      blooms.check(bloomOf.get(rows[from]!.blockHash)!, rows, from, to);
      from = to;
    }
  };
  const limit = pLimit(Math.max(1, scope.concurrency));
  const groups: MissingHeader[][] = [];
  for (let i = 0; i < missing.length; i += GROUP) groups.push(missing.slice(i, i + GROUP));
  const stored = await Promise.all(
    groups.map((group) =>
      limit(async () => {
        const n = await fetchGroup(deps, scope, group, beforeStoring);
        scope.onStored?.(n);
        return n;
      }),
    ),
  );
  return stored.reduce((a, b) => a + b, 0);
}

/** Some headers were not found yet: asked again after a wait (a lagging node behind a load balancer). */
class HeadersNotFoundYet extends RetryableError {
  constructor(readonly pending: readonly MissingHeader[]) {
    super(`${pending.length} header(s) not found yet`);
  }
}

/**
 * Fetches, verifies and stores one group of headers, asking again for those not found yet. Each header is checked
 * by the hash rule of the run's chain (`scope.headers`), which also decides what becomes of one the rule cannot
 * verify (stored unverified, said once per run; or, under `"verifyHeaders": "require"`, the run fails);
 * `beforeStoring` sees each answer's checked headers before they are stored. Resolves to the number stored.
 */
export async function fetchGroup<H extends MissingHeader>(deps: EnrichDeps, scope: HeaderScope, group: H[], beforeStoring?: BeforeStoring<H>): Promise<number> {
  let pending = group;
  let stored = 0;
  const check = headerCheck(deps.source, scope.headers.chain);
  try {
    await (deps.budget ?? NO_BUDGET).time('headers', () =>
      withRetry(
        async () => {
          const answers = await deps.source.headersByHash(pending.map((m) => m.hash));
          const verified: VerifiedHeader<H>[] = [];
          const notFound: H[] = [];
          for (const m of pending) {
            const raw = answers.get(m.hash);
            if (raw === null || raw === undefined) notFound.push(m);
            else verified.push({ block: m, checked: check(raw, { hash: m.hash, number: m.number, timestamp: m.timestamp, contracts: m.contracts }) });
          }
          scope.headers.admit(verified);
          const checked = verified.map((v) => v.checked);
          if (beforeStoring && verified.length) await beforeStoring(verified);
          const store = deps.storeHeaders ?? ((...a) => storeHeaders(deps.warehouse, ...a));
          // one trace for the store's attempts: a retry after a lost COMMIT answer counts what the committed one stored
          const trace = commitTrace(deps.clock);
          stored += await retried(deps, scope.job, 'storing headers', () => store(scope.headers.chain, checked, scope.runId, trace));
          pending = notFound;
          if (pending.length) throw new HeadersNotFoundYet(pending);
        },
        {
          ...NOT_FOUND_RETRY,
          clock: deps.clock,
          onRetry: (_err, attempt) => deps.logger.warn({ msg: 'headers not found yet; asking again', job: scope.job, blocks: pending.length, attempt }),
        },
      ),
    );
  } catch (err) {
    if (!(err instanceof RetriesExhaustedError && err.lastError instanceof HeadersNotFoundYet)) throw err;
    const first = pending[0]!;
    throw new ChainDataError(
      `The API does not know block ${first.number} (${first.hash}) that transfers point at, nor ${pending.length - 1} other block(s), after ${err.attempts} tries. ` +
        'The chain has probably reorganized since they were read: run the range again to replace them.',
    );
  }
  return stored;
}

/**
 * The header check of a run of `chain`: the source's own (which remembers the headers it checked already), when it
 * checks for the same chain; else `checkHeader` of that chain.
 */
function headerCheck(source: Pick<Source, 'checks'>, chain: number): HeaderChecker {
  const own = source.checks;
  return own?.chain === chain ? own.checkHeader : (raw, expected) => checkHeader(chain, raw, expected);
}
