import { NO_BUDGET, type TimeBudget } from '../common/time-budget.ts';
import type { Logger } from 'pino';
import { PageKeyRejectedError } from '../source/errors.ts';
import type { Source } from '../source/source.ts';
import type { TransfersPage } from '../source/transfers-page.ts';
import type { Clock } from '../common/clock.ts';
import { ChainDataError } from './errors.ts';
import type { CopyLanes } from '../warehouse/copy-lanes.ts';
import type { MergeCounts } from '../warehouse/load-page.ts';
import { openPageWriter } from '../warehouse/page-writer.ts';
import { decideFresh, dropPageKey, splitChunk, type ChunkState } from '../warehouse/ranges.ts';
import { splitPoint } from './split.ts';
import { untilAborted } from '../common/until-aborted.ts';
import { retried } from './retried.ts';
import { pageSpan, type SpanState } from './page-span.ts';
import type { Warehouse } from '../warehouse/db.ts';

export interface ChunkDeps {
  warehouse: Warehouse;
  source: Pick<Source, 'fetchPage' | 'endQuery'>;
  logger: Logger;
  clock: Clock;
  /** Where the run's time goes (`--time-budget`): a page asked of the source counts as `api` until it is there. */
  budget?: TimeBudget;
  /**
   * When a fresh chunk's transaction commits: its pages go through one of the run's COPY streams (`openCopyLanes`:
   * a connection each, one COPY across pages, a transaction per several pages, shared by the chunks that take the same
   * lane) and are announced (`ChunkEvents.onPage`) once committed. Without it, each page is its own transaction.
   */
  lanes?: Pick<CopyLanes, 'take'>;
}

/**
 * How far a chunk writes into the group before it waits. Its grouped pages are listed as they are written, and the
 * list is only emptied by this wait: once it is longer than this, each further page commits the group's open
 * transaction and waits for the oldest page's announcement, which keeps the chunk from reading far ahead of the
 * commits. Measured on 200,000 transfers (four alternating runs each): 16 pages with 20,000 rows a commit, 6.2–7.6 s,
 * mean 6.9 s (PostgreSQL idle about a fifth of the time once few chunks were left); 24 pages with 10,000 rows,
 * 6.0–7.2 s, mean 6.4 s, peak RSS no higher. A list of only the pages not yet announced (so a chunk forces no commit
 * the group would make anyway: 106 commits instead of 254 for 1,000,000 transfers) was no faster (mean 6.02 s
 * against 5.97 s, four alternating pairs) and held more (peak RSS 161–199 MB against 157–164 MB).
 */
const UNANNOUNCED_PAGES = 24;

/**
 * The rows a chunk's unannounced pages may hold, as {@link UNANNOUNCED_PAGES} full builder pages do: a node source's
 * page is one `eth_getLogs` answer's share (thousands of logs), and while the announcements lag (each page's headers
 * are looked up and stored through round trips to PostgreSQL) a chunk would otherwise hold 24 such pages. Measured on
 * 1,000,000 transfers through the node source with PostgreSQL behind a proxy adding 10 ms each way: peak RSS 226–251 MB
 * without this bound, 204–212 MB with it (30 ms: 266 and 211 MB); with no added latency 175–187 and 180–182 MB, and the
 * same wall time.
 */
export const UNANNOUNCED_ROWS = 24_000;

export interface ChunkTask {
  job: string;
  runId: string;
  contract: string;
  pageSize: number;
  chunk: ChunkState;
  /** Aborted when the run stops (a signal, another chunk's failure): stop after the page being written, or at once while waiting for one. */
  signal?: AbortSignal;
  /** Lets the run take the chunk's lower, unread blocks for another connection (see {@link ChunkSplitter}). */
  split?: ChunkSplitter;
}

/**
 * The run's side of splitting a running chunk: asked between pages whether a connection is idle, the
 * chunk gives the lower half of the blocks it has not reached to a new chunk (when enough is left to be
 * worth a request more) and hands it over.
 */
export interface ChunkSplitter {
  /** A connection would be idle: give blocks away now, if worth it. */
  wanted(): boolean;
  /** The new chunk, recorded in the warehouse; or undefined when the chunk keeps its blocks. */
  answer(part: ChunkState | undefined): void;
}

export interface ChunkEvents {
  /** After each committed page: its merge counts, the blocks it newly covered, and the token metadata it carried. */
  onPage(counts: MergeCounts, blocksCovered: number, page: TransfersPage): Promise<void> | void;
}

/**
 * Reads one chunk to its end, page after page in order (newest first), each page committed with the
 * chunk's new position. Resumes from a stored page key; when the API refuses that key (expired, or the
 * server restarted), goes on from the lowest committed block, inclusive.
 */
export async function readChunk(deps: ChunkDeps, task: ChunkTask, events: ChunkEvents): Promise<void> {
  const { chunk } = task;
  if (chunk.done) return;
  let pageKey = chunk.pageKey ?? undefined;
  // the query the page key belongs to starts here; after a split the chunk's own blocks start higher
  let queryFrom = chunk.queryFromBlock ?? chunk.fromBlock;
  // every block above `frontier` is committed whole; the previous page ended in block `span.edge`
  let frontier = (chunk.resumeToBlock ?? chunk.toBlock) + 1;
  let spanState: SpanState = { edge: chunk.resumeToBlock ?? chunk.toBlock + 1, openKeys: chunk.openKeys };
  const again = <T>(what: string, work: () => Promise<T>) => retried(deps, task.job, what, work, task.signal);
  if (chunk.fresh === null) await again("looking for rows in the chunk's blocks", () => decideFresh(deps.warehouse.db, chunk, task.contract));
  // a deadlock with another job, or PostgreSQL restarting, costs a retry of a page, not the run
  const writer = openPageWriter(deps.warehouse, deps, { job: task.job, contract: task.contract, chunk });
  let lease = chunk.fresh && deps.lanes ? deps.lanes.take() : undefined;
  const keysSeen = new Set<string>(pageKey === undefined ? [] : [pageKey]);
  // the next page is fetched while this one loads: the API and PostgreSQL work at the same time
  const fetchPage = (key: string | undefined): Promise<TransfersPage> => {
    const request = (deps.budget ?? NO_BUDGET).time('api', () =>
      deps.source.fetchPage({
        contract: task.contract,
        fromBlock: queryFrom,
        toBlock: chunk.toBlock,
        pageSize: task.pageSize,
        ...(key !== undefined && { pageKey: key }),
      }),
    );
    request.catch(() => undefined); // awaited below, or abandoned when the run stops
    return request;
  };
  let prefetched: Promise<TransfersPage> | undefined;
  // pages written into the group, announced in order once committed; the first failure among them stops the chunk
  const unannounced: { announced: Promise<void>; rows: number }[] = [];
  let unannouncedRows = 0;
  let announced: Promise<void> = Promise.resolve();
  let announceFailure: { error: unknown } | undefined;
  /**
   * Waits until at most `left` grouped pages, holding at most `rows` rows, are unannounced (the newest page may hold more
   * alone), committing the lane's transaction if they wait for it (the pages of its other chunks commit with it: measured, waiting
   * without that commit when the pages waited for were committed already held more, 181–184 MB of peak RSS at 1,000,000
   * transfers against 151–156 MB, and was no faster).
   */
  const announce = async (left: number, rows = Number.POSITIVE_INFINITY) => {
    const over = () => unannounced.length > left || (unannounced.length > 1 && unannouncedRows > rows);
    if (over()) await lease?.group.flush();
    while (over()) {
      const oldest = unannounced.shift()!;
      await oldest.announced;
      unannouncedRows -= oldest.rows;
    }
    if (announceFailure) throw announceFailure.error;
  };
  let loopFailed = false;
  try {
    for (;;) {
      if (task.signal?.aborted) return;
      if (task.split?.wanted()) {
        const lastGiven = splitPoint(chunk, task.pageSize);
        const part = lastGiven === undefined ? undefined : await again('splitting a chunk', () => splitChunk(deps.warehouse.db, chunk, lastGiven));
        if (part)
          deps.logger.info({
            msg: 'chunk split',
            job: task.job,
            contract: task.contract,
            chunk: chunk.id,
            kept: `${chunk.fromBlock}–${chunk.resumeToBlock}`,
            given: `${part.fromBlock}–${part.toBlock}`,
            to: part.id,
          });
        task.split.answer(part);
      }
      let page: TransfersPage;
      try {
        // stopped while the page is on its way (a node that hangs answers only at --rpc-timeout): it is abandoned,
        // as none of its rows was written; what the chunk committed stays
        const answer = await untilAborted(prefetched ?? fetchPage(pageKey), task.signal);
        if (!answer) return;
        page = answer.value;
      } catch (err) {
        if (!(err instanceof PageKeyRejectedError) || pageKey === undefined) throw err;
        // the grouped pages' checkpoints are committed before the chunk's row is rewritten
        await announce(0);
        const restartAt = Math.min(chunk.resumeToBlock ?? chunk.toBlock, chunk.toBlock);
        deps.logger.warn({ msg: 'page key refused; going on from the lowest committed block', job: task.job, contract: task.contract, block: restartAt });
        await again('dropping a refused page key', () => dropPageKey(deps.warehouse.db, chunk, restartAt));
        deps.source.endQuery?.({ contract: task.contract, fromBlock: queryFrom, toBlock: chunk.toBlock });
        chunk.toBlock = restartAt;
        // as dropPageKey left the chunk's row: the next page moves it from there
        chunk.resumeToBlock = restartAt;
        chunk.pageKey = null;
        chunk.openKeys = [];
        chunk.queryFromBlock = null;
        queryFrom = chunk.fromBlock;
        pageKey = undefined;
        spanState = { edge: restartAt, openKeys: [] };
        continue;
      } finally {
        prefetched = undefined;
      }
      // rows below the chunk's blocks (given to another chunk since its query started) end it: they are the other's
      const below = chunk.fromBlock > queryFrom ? page.transfers.findIndex((t) => t.blockNumber < chunk.fromBlock) : -1;
      if (below >= 0) page = { ...page, transfers: page.transfers.slice(0, below), count: below, nextPageKey: undefined };
      // a key the API gave before would page forever: this page is kept, then the chunk stops
      const repeated = page.nextPageKey !== undefined && keysSeen.has(page.nextPageKey);
      if (page.nextPageKey !== undefined && !repeated) prefetched = fetchPage(page.nextPageKey);
      const last = page.transfers.at(-1);
      const done = page.nextPageKey === undefined;
      const resumeToBlock = last ? Math.min(last.blockNumber, chunk.resumeToBlock ?? last.blockNumber) : chunk.resumeToBlock;
      const span = pageSpan({ fromBlock: chunk.fromBlock, toBlock: chunk.toBlock, state: spanState, rows: page.transfers, done });
      const load = {
        runId: task.runId,
        chainId: chunk.chainId,
        rangeId: chunk.rangeId,
        chunkId: chunk.id,
        contract: task.contract,
        rows: page.transfers,
        interior: span.interior,
        carried: span.carried,
        openRows: span.openRows,
        start: { pageKey: chunk.pageKey, resumeToBlock: chunk.resumeToBlock, done: chunk.done, openKeys: chunk.openKeys },
        checkpoint: { pageKey: page.nextPageKey ?? null, resumeToBlock, done, openKeys: span.next.openKeys },
      };
      const grouped = chunk.fresh && lease ? await lease.group.add(load, { job: task.job, contract: task.contract, chunk }) : undefined;
      // a page written on its own goes after every grouped page of the chunk is committed: its checkpoint is later
      if (!grouped) {
        await announce(0);
        // a chunk found not fresh (a row of its blocks was there) stays so: it writes no more into its lane
        lease?.release();
        lease = undefined;
      }
      const counts = grouped ? undefined : await writer.write(load);
      chunk.pageKey = page.nextPageKey ?? null;
      chunk.rows += page.transfers.length;
      chunk.resumeToBlock = resumeToBlock;
      chunk.done = done;
      chunk.openKeys = [...span.next.openKeys];
      const newFrontier = done ? chunk.fromBlock : Math.min(frontier, (resumeToBlock ?? chunk.toBlock) + 1);
      const covered = frontier - newFrontier;
      if (grouped) {
        const committedPage = page;
        announced = announced.then(async () => {
          if (announceFailure) return;
          try {
            await events.onPage(await grouped.committed, covered, committedPage);
          } catch (error) {
            announceFailure ??= { error };
          }
        });
        unannounced.push({ announced, rows: committedPage.transfers.length });
        unannouncedRows += committedPage.transfers.length;
        await announce(UNANNOUNCED_PAGES, UNANNOUNCED_ROWS);
      } else await events.onPage(counts!, covered, page);
      frontier = newFrontier;
      spanState = span.next;
      if (done) break;
      if (repeated) {
        throw new ChainDataError(
          `The API answered contract ${task.contract}, blocks ${chunk.fromBlock}–${chunk.toBlock}, with a nextPageKey it had ` +
            'already given, which would page forever. The pages committed so far are kept; run again later, and report it to the API provider if it persists.',
        );
      }
      keysSeen.add(page.nextPageKey!);
      pageKey = page.nextPageKey;
    }
  } catch (err) {
    loopFailed = true;
    throw err;
  } finally {
    deps.source.endQuery?.({ contract: task.contract, fromBlock: queryFrom, toBlock: chunk.toBlock });
    try {
      // what the chunk wrote into the group is committed and announced whatever stopped it: nothing committed is lost
      await announce(0).catch((err: unknown) => {
        if (!loopFailed) throw err;
      });
    } finally {
      lease?.release();
      await writer.close();
    }
  }
}
