import type { TransferRecord } from '../dataset/types.ts';
import { knownHeaders, type MissingHeader } from '../warehouse/headers.ts';
import { fetchGroup, type EnrichDeps } from './enrich.ts';
import { blockDisagreementMessage, disagreeingFields } from '../dataset/block-agreement.ts';
import { ChainDataError } from './errors.ts';

export interface HeaderQueue {
  /**
   * Takes the blocks of a committed page: the headers the warehouse lacks are fetched in full batches
   * while reading goes on. Waits while as many batches as allowed are in flight, and throws the first
   * failure of a fetch (or rows that disagree on a block's number or timestamp).
   */
  offer(rows: readonly TransferRecord[], contract: string): Promise<void>;
  /** Fetches what is left (the last, partial batch); resolves to the number of headers stored. */
  drain(): Promise<number>;
  /** Waits for the fetches in flight, ignoring their outcome (the run is failing anyway). */
  settle(): Promise<void>;
}

export interface HeaderQueueScope {
  job: string;
  runId: string;
  /** Calls per JSON-RPC POST. */
  batchSize: number;
  /** POSTs in flight at once. */
  concurrency: number;
  /** Offered blocks remembered besides those whose header is on its way, the newest (default 4096). */
  remembered?: number;
}

/** Blocks remembered after they were offered: a block's rows come in adjacent pages of one chunk. */
const REMEMBERED = 4096;

/**
 * Fetches the header of every block that committed pages point at, each once, alongside the reading: the
 * blocks of each page are remembered for a while (a block's rows come in adjacent pages), sifted against
 * block_headers a batch at a time, and fetched a full JSON-RPC batch at a time. A block whose header is on
 * its way (waiting to be sifted, in a batch, or in a POST) is remembered until it is stored, however many
 * blocks come meanwhile: other contracts' chunks reach the same blocks later, and would ask for it again.
 *
 * @example const headers = createHeaderQueue(deps, { job, runId, batchSize: 100, concurrency: 2 });
 * await headers.offer(page.transfers, contract); // … for each page, then:
 * await headers.drain(); // → 30534
 */
export function createHeaderQueue(deps: EnrichDeps, scope: HeaderQueueScope): HeaderQueue {
  const memory = scope.remembered ?? REMEMBERED;
  const remembered = new Map<string, MissingHeader>();
  // offered and not yet known to be stored: kept apart from `remembered`, which forgets the oldest blocks
  const pending = new Map<string, MissingHeader>();
  let candidates: MissingHeader[] = [];
  const batch: MissingHeader[] = [];
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  let stored = 0;

  const remember = (t: TransferRecord, contract: string): MissingHeader | undefined => {
    const known = remembered.get(t.blockHash) ?? pending.get(t.blockHash);
    if (known) {
      if (disagreeingFields(known, t).length) throw new ChainDataError(blockDisagreementMessage(known, t));
      if (!known.contracts.includes(contract)) known.contracts.push(contract);
      return undefined;
    }
    const header: MissingHeader = { hash: t.blockHash, number: t.blockNumber, timestamp: t.blockTimestamp, contracts: [contract] };
    remembered.set(t.blockHash, header);
    if (remembered.size > memory) remembered.delete(remembered.keys().next().value!);
    pending.set(t.blockHash, header);
    return header;
  };

  const sift = async () => {
    const offered = candidates;
    candidates = [];
    const known = await knownHeaders(
      deps.warehouse.db,
      offered.map((h) => h.hash),
    );
    for (const h of offered) {
      if (known.has(h.hash)) pending.delete(h.hash);
      else batch.push(h);
    }
  };

  const send = (group: MissingHeader[]) => {
    const fetching: Promise<void> = fetchGroup(deps, scope, group)
      .then(
        (n) => {
          stored += n;
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
    async offer(rows, contract) {
      if (failure) throw failure.error;
      for (let i = 0; i < rows.length; i++) {
        const t = rows[i]!;
        // a page's rows of one block are adjacent, and agree on its hash, number and timestamp (validated): its first row stands for them
        if (i > 0 && rows[i - 1]!.blockNumber === t.blockNumber) continue;
        const header = remember(t, contract);
        if (header) candidates.push(header);
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
  };
}
