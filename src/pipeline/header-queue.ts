import { NO_BUDGET } from '../common/time-budget.ts';
import type { TransferRecord } from '../dataset/types.ts';
import { knownHeaders, type MissingHeader } from '../warehouse/headers.ts';
import { retried } from './retried.ts';
import { fetchGroup, type EnrichDeps, type HeaderScope, type VerifiedHeader } from './enrich.ts';
import { blockDisagreementMessage, disagreeingFields } from '../dataset/block-agreement.ts';
import { bloomBytes } from '../eth/logs-bloom.ts';
import { createBloomCheck } from './bloom-check.ts';
import { ChainDataError } from './errors.ts';

export interface HeaderQueue {
  /**
   * Takes the blocks of a committed page: the headers the warehouse lacks are fetched in full batches
   * while reading goes on, and each row is checked against its block's logsBloom once the header is
   * verified (or found stored), unless the source proved them so already (`bloomProven`: counted, not checked
   * again), and those the source fetched for the page (`fetched`) go to a batch without being looked up. Waits while
   * as many batches as allowed are in flight, and throws the first
   * failure of a fetch (or rows that disagree on a block's number or timestamp, or that a bloom rules out).
   */
  offer(rows: readonly TransferRecord[], contract: string, page?: OfferedPage): Promise<void>;
  /** Fetches what is left (the last, partial batch); resolves to the number of headers stored. */
  drain(): Promise<number>;
  /** Waits for the fetches in flight, ignoring their outcome (the run is failing anyway). */
  settle(): Promise<void>;
  /**
   * Transfers checked against their block's logsBloom so far: every row offered, once its header is there,
   * and the rows earlier runs stored in the blocks whose headers this queue fetched.
   */
  readonly checked: number;
}

/** What the source told of a page's blocks (`TransfersPage`). */
export interface OfferedPage {
  /** Its rows were found in their blocks' blooms already: counted, not checked again. */
  bloomProven?: boolean;
  /** Blocks whose headers the source fetched and holds, after looking for them in the warehouse: batched without a look-up. */
  fetched?: ReadonlySet<string>;
}

export interface HeaderQueueScope extends HeaderScope {
  /** Calls per JSON-RPC POST. */
  batchSize: number;
  /** POSTs in flight at once. */
  concurrency: number;
  /** Offered blocks remembered besides those whose header is on its way, the newest (default 4096). */
  remembered?: number;
}

/** Blocks remembered after they were offered: a block's rows come in adjacent pages of one chunk. */
const REMEMBERED = 4096;

/** An offered block: what its rows said about it, and its logsBloom once the header is verified or found stored. */
interface QueuedBlock extends MissingHeader {
  bloom?: Uint8Array;
  /** Rows of committed pages that wait for the bloom. */
  waiting: TransferRecord[];
}

/**
 * Fetches the header of every block that committed pages point at, each once, alongside the reading: the
 * blocks of each page are remembered for a while (a block's rows come in adjacent pages), sifted against
 * block_headers a batch at a time, and fetched a full JSON-RPC batch at a time. A block whose header is on
 * its way (waiting to be sifted, in a batch, or in a POST) is remembered until it is stored, however many
 * blocks come meanwhile: other contracts' chunks reach the same blocks later, and would ask for it again.
 *
 * Every row offered is checked against its block's logsBloom (`bloom-check.ts`): at once when the bloom is
 * known, else when the header is verified (before it is stored: a block holding a row its bloom rules out
 * keeps no header, so a later run checks its rows again) or found stored already. Rows earlier runs stored
 * are not read back: a run that reads them again checks them, and reconciliation takes away those the source
 * no longer serves (a check of them before would stop it). A remembered block keeps its bloom (256 bytes), so
 * the next pages' rows of it need no query.
 *
 * @example const headers = createHeaderQueue(deps, { job, runId, headers: createHeaderPolicy(jobConfig, logger), batchSize: 100, concurrency: 2 });
 * await headers.offer(page.transfers, contract); // … for each page, then:
 * await headers.drain(); // → 30534
 */
export function createHeaderQueue(deps: EnrichDeps, scope: HeaderQueueScope): HeaderQueue {
  const memory = scope.remembered ?? REMEMBERED;
  const remembered = new Map<string, QueuedBlock>();
  // offered and not yet known to be stored: kept apart from `remembered`, which forgets the oldest blocks
  const pending = new Map<string, QueuedBlock>();
  let candidates: QueuedBlock[] = [];
  const batch: QueuedBlock[] = [];
  const budget = deps.budget ?? NO_BUDGET;
  const blooms = createBloomCheck((n) => deps.metrics?.transfersBloomChecked({ job: scope.job, chain: scope.headers.chain }, n));
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  let stored = 0;

  const remember = (t: TransferRecord, contract: string, fetched: ReadonlySet<string> | undefined): QueuedBlock => {
    const known = remembered.get(t.blockHash) ?? pending.get(t.blockHash);
    if (known) {
      if (disagreeingFields(known, t).length) throw new ChainDataError(blockDisagreementMessage(known, t));
      if (!known.contracts.includes(contract)) known.contracts.push(contract);
      return known;
    }
    const block: QueuedBlock = { hash: t.blockHash, number: t.blockNumber, timestamp: t.blockTimestamp, contracts: [contract], waiting: [] };
    remembered.set(t.blockHash, block);
    if (remembered.size > memory) remembered.delete(remembered.keys().next().value!);
    pending.set(t.blockHash, block);
    if (fetched?.has(t.blockHash)) batch.push(block);
    else candidates.push(block);
    return block;
  };

  /** The block's bloom is known: its waiting rows are checked, and the next ones will be at once. */
  const arrived = (block: QueuedBlock, bloom: Uint8Array) => {
    block.bloom = bloom;
    const rows = block.waiting;
    block.waiting = [];
    if (rows.length) budget.timeSync('parse', () => blooms.check(bloom, rows));
  };

  /** Before verified headers are stored: the rows that waited for them (a header whose block holds a row its bloom rules out is not stored). */
  const beforeStoring = (verified: readonly VerifiedHeader<QueuedBlock>[]) => {
    for (const { block, checked } of verified) arrived(block, bloomBytes(checked.header.logsBloom!));
  };

  const sift = async () => {
    const offered = candidates;
    candidates = [];
    const known = await retried(deps, scope.job, 'looking up stored headers', () => knownHeaders(deps.warehouse.db, scope.headers.chain, offered));
    for (const h of offered) {
      const stored = known.get(h.hash);
      if (stored === undefined) {
        batch.push(h);
        continue;
      }
      pending.delete(h.hash);
      arrived(h, bloomBytes(stored.logsBloom));
    }
  };

  const send = (group: QueuedBlock[]) => {
    const fetching: Promise<void> = fetchGroup(deps, scope, group, beforeStoring)
      .then(
        (n) => {
          stored += n;
          scope.onStored?.(n);
        },
        (error: unknown) => {
          failure ??= { error };
        },
      )
      .finally(() => {
        inFlight.delete(fetching);
        for (const h of group) pending.delete(h.hash);
      });
    inFlight.add(fetching);
  };

  // only full batches go out until the last call: another page's offer may take the batch while this one waits
  const sendFull = async (last: boolean) => {
    const enough = () => batch.length >= (last ? 1 : scope.batchSize);
    while (enough()) {
      while (inFlight.size >= scope.concurrency) await Promise.race(inFlight);
      if (failure) throw failure.error;
      if (enough()) send(batch.splice(0, scope.batchSize));
    }
  };

  return {
    async offer(rows, contract, page = {}) {
      const bloomProven = page.bloomProven === true;
      if (failure) throw failure.error;
      if (bloomProven) blooms.proven(rows.length);
      for (let i = 0; i < rows.length; ) {
        const t = rows[i]!;
        // a page's rows of one block are adjacent, and agree on its hash, number and timestamp (validated): its first row stands for them
        let end = i + 1;
        while (end < rows.length && rows[end]!.blockNumber === t.blockNumber) end++;
        const block = remember(t, contract, page.fetched);
        // rows the source proved against this block's verified header are counted above, not checked again
        if (!bloomProven) {
          if (block.bloom) budget.timeSync('parse', () => blooms.check(block.bloom!, rows, i, end));
          else for (let k = i; k < end; k++) block.waiting.push(rows[k]!);
        }
        i = end;
      }
      if (candidates.length >= scope.batchSize) await sift();
      await sendFull(false);
    },
    async drain() {
      if (candidates.length) await sift();
      await sendFull(true);
      await Promise.all(inFlight);
      if (failure) throw failure.error;
      return stored;
    },
    async settle() {
      await Promise.all(inFlight);
    },
    get checked() {
      return blooms.checked;
    },
  };
}
