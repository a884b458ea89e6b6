import type pg from 'pg';
import type { Logger } from 'pino';
import copyStreams from 'pg-copy-streams';
import type { Clock } from '../common/clock.ts';
import { NO_BUDGET, type TimeBudget } from '../common/time-budget.ts';
import type { TransferRecord } from '../dataset/types.ts';
import { copyLines, TRANSFER_COLUMNS } from './copy.ts';
import type { Warehouse } from './db.ts';
import { moveChunks, type MergeCounts, type PageLoad } from './load-page.ts';
import { holdConnection } from './held-connection.ts';
import { committedAnyway, CommitUnknownError, openPageWriter } from './page-writer.ts';
import { brokenConnection, classifyPgError } from './pg-errors.ts';
import type { ChunkState } from './ranges.ts';

/** When a group's transaction is committed: whichever comes first. */
export interface GroupPolicy {
  /** Rows in the open transaction. */
  maxRows: number;
  /** Milliseconds since its first page. */
  maxAgeMs: number;
}

/** The longest a group's transaction stays open: a crash re-reads at most about a second of pages. */
export const GROUP_MAX_AGE_MS = 1_000;

/** A fresh chunk's page taken into the group: written into the open COPY, committed with the transaction. */
export interface GroupedPage {
  /** Settles when the transaction holding the page commits (or, when it failed, once the page was written again on its own). */
  committed: Promise<MergeCounts>;
}

/**
 * The first load's writer: a fresh chunk COPYs into token_transfers through one connection and one COPY statement
 * that stays open across pages; a transaction holds several pages and ends with the checkpoint of each chunk in it
 * (the position after its last page there), so a crash loses at most that transaction and the pages are read again.
 * The chunks read at once share a run's groups, at most two (`copy-lanes.ts`). Measured on a 2-core machine with
 * PostgreSQL 15 (200,000 transfers): one COPY stream took 3.5–3.9 s of PostgreSQL CPU, where a transaction per page
 * on four connections took 6.0–6.3 s; one group for all four chunks of a run kept PostgreSQL's COPY on one core
 * (1,000,000 transfers: 32.9–37.4 s against 24.5–30.0 s with a group per chunk), and two groups were faster again.
 *
 * A commit is not waited for: the end of the COPY, the checkpoints, `COMMIT`, `BEGIN` and the next COPY follow one
 * another on the connection while pages are already written into the next COPY (held until it starts), so PostgreSQL
 * goes from the one to the next without waiting on the exporter. Its outcome is looked at before the next transaction
 * commits, or when the group is flushed. A transaction that failed (a row is in
 * token_transfers already: another job loaded those blocks; a deadlock; a lost connection) is rolled back with the
 * one after it, and the pages of both are written again one by one, in the order they came, as a chunk's page writer
 * does (`page-writer.ts`: COPY, or a merge once a row is found there, with its retries).
 */
export interface CopyGroup {
  /**
   * Writes a page of a fresh chunk (`chunk.fresh`) into the open transaction and resolves once it is written
   * (backpressure: while PostgreSQL is behind, this waits); its commit comes later (`GroupedPage.committed`).
   * Pages of one chunk must come in order, and none of the chunk's through another writer until they are committed.
   */
  add(load: Omit<PageLoad, 'mode'>, scope: { job: string; contract: string; chunk: ChunkState }): Promise<GroupedPage>;
  /** Commits the open transaction, if any, and resolves once every page taken so far is committed. */
  flush(): Promise<void>;
  /** Flushes, then gives the connection back. */
  close(): Promise<void>;
}

interface Entry {
  load: Omit<PageLoad, 'mode'>;
  scope: { job: string; contract: string; chunk: ChunkState };
  resolve(counts: MergeCounts): void;
  reject(err: unknown): void;
}

interface Transaction {
  client: pg.PoolClient;
  stream: ReturnType<typeof copyStreams.from>;
  /** The first error the COPY stream reported (PostgreSQL refused a row, or the connection broke). */
  failed?: unknown;
  entries: Entry[];
  rows: number;
  startedAt: number;
  timer?: ReturnType<typeof setTimeout>;
  /** Once sealed: resolves to undefined when it committed, else to what failed (`atCommit`: the COMMIT itself, its outcome unknown when the connection broke). */
  outcome?: Promise<{ error: unknown; atCommit: boolean } | undefined>;
}

/** Rows per write into the COPY stream: about 33 KB of text (see `copy.ts`). */
const WRITE_BATCH = 300;
const COPY_INTO = `COPY token_transfers (${[...TRANSFER_COLUMNS, 'chain_id', 'inserted_by_run', 'updated_by_run'].join(', ')}) FROM STDIN`;

/**
 * Opens a group writer (a lane of the run's, `copy-lanes.ts`): no connection until the first page.
 *
 * @example const group = openCopyGroup(warehouse, { logger, clock }, { maxRows: 10_000, maxAgeMs: GROUP_MAX_AGE_MS });
 * const { committed } = await group.add(load, { job, contract, chunk }); // written
 * await group.flush(); await committed; // → { inserted: 1000, updated: 0, unchanged: 0 }
 */
export function openCopyGroup(warehouse: Warehouse, deps: { logger: Logger; clock: Clock; budget?: TimeBudget | undefined }, policy: GroupPolicy): CopyGroup {
  const budget = deps.budget ?? NO_BUDGET;
  const held = holdConnection(warehouse.pool, deps.clock);
  /** The transaction pages go into. */
  let open: Transaction | undefined;
  /** The transaction whose commit is under way or whose outcome nobody looked at yet. */
  let sealed: Transaction | undefined;
  /**
   * Set once a page could not be written even on its own, or a COMMIT failed and nobody could tell whether it
   * committed: the pages after it were refused, and so is every later page, of every chunk sharing the group, so no
   * chunk's position can move past a page that is not stored (or move back over pages that are).
   */
  let poisoned: { error: unknown } | undefined;
  // one thing at a time: adds, commits and replays queue up here
  let turn: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const next = turn.then(work);
    turn = next.catch(() => undefined);
    return next;
  };
  /**
   * A transaction on `c` whose COPY is sent once `begun` settles (after the transaction before it has ended and a
   * `BEGIN`): pages may be written into it at once, and wait there (backpressure) until it starts.
   */
  const transaction = (c: pg.PoolClient, suffix: Buffer, begun: Promise<unknown>): Transaction => {
    const stream = copyStreams.from(COPY_INTO);
    // sent whatever came before: on a connection that broke, the COPY fails at once, and the pages written into it are written again
    void begun.then(
      () => c.query(stream),
      () => c.query(stream),
    );
    const tx: Transaction = { client: c, stream, entries: [], rows: 0, startedAt: deps.clock.now() };
    stream.on('error', (err: unknown) => {
      tx.failed ??= err;
    });
    suffixes.set(tx, suffix);
    tx.timer = setTimeout(() => void exclusive(() => (open === tx ? commit(false) : Promise.resolve())).catch(() => undefined), policy.maxAgeMs);
    tx.timer.unref();
    return tx;
  };
  // the run id and chain are the same for every page of a transaction
  const suffixes = new WeakMap<Transaction, Buffer>();
  const suffixOf = (load: Omit<PageLoad, 'mode'>) => Buffer.from(`\t${load.chainId}\t${load.runId}\t${load.runId}\n`, 'latin1');

  const write = async (tx: Transaction, rows: readonly TransferRecord[]) => {
    const suffix = suffixes.get(tx)!;
    // oldest first: each index then grows at the end of the page's run of keys
    for (let end = rows.length; end > 0; end -= WRITE_BATCH) {
      const lines = copyLines(rows, end - 1, Math.max(0, end - WRITE_BATCH), suffix);
      if (tx.failed) throw tx.failed;
      await written(tx, lines);
    }
  };

  /**
   * Seals the open transaction: its COPY ends, then its checkpoints and COMMIT follow, and (`next`) the next
   * transaction's BEGIN and COPY, which becomes the open one at once. The transaction sealed before is looked at first.
   */
  const commit = async (next: boolean): Promise<void> => {
    await settle();
    const tx = open;
    if (!tx) return;
    open = undefined;
    clearTimeout(tx.timer);
    const c = tx.client;
    const ended = finished(tx);
    tx.stream.end();
    // one statement at a time on the connection (pg takes no second query while one runs); a failure is kept, the
    // steps after it are skipped, and the transaction ends either way, so the connection is ready for the next BEGIN
    let failure: { error: unknown; atCommit: boolean } | undefined;
    const step = async (work: () => Promise<unknown>) => {
      if (failure) return;
      try {
        await work();
      } catch (error) {
        failure = { error, atCommit: false };
      }
    };
    const closed = (async () => {
      await step(() => ended);
      await step(() =>
        moveChunks(
          c,
          tx.entries.map((e) => e.load),
        ),
      );
      // after a failure nothing of the transaction may stay: not all failures abort it (a chunk found elsewhere is
      // told by the statement's answer, which moved the others), so it is rolled back, never committed
      if (failure) await c.query('ROLLBACK').catch(() => undefined);
      else
        await c.query('COMMIT').catch((error: unknown) => {
          failure = { error, atCommit: true };
        });
    })();
    if (next)
      open = transaction(
        c,
        suffixes.get(tx)!,
        closed.then(() => c.query('BEGIN')),
      );
    tx.outcome = closed.then(() => {
      if (failure) return failure;
      resolveCommitted(tx);
      return undefined;
    });
    sealed = tx;
  };

  /** Looks at the sealed transaction's outcome: when it failed, it and the open one are rolled back and their pages written again. */
  const settle = async (): Promise<void> => {
    const tx = sealed;
    if (!tx) return;
    const failed = await budget.time('commit', () => tx.outcome!);
    sealed = undefined;
    if (failed === undefined) return;
    const later = open;
    open = undefined;
    if (later) await abandon(later);
    // a lost connection's backend is ended before anything is read or written again: until then its COMMIT may still
    // come, and its locks would hold every page written again
    if (held.broken() || brokenConnection(failed.error)) await held.drop(failed.error as Error);
    // a COMMIT whose answer was lost may have committed: written again, its pages would count twice in their chunks
    const committed = failed.atCommit
      ? await committedAnyway(
          warehouse.pool,
          tx.entries.map((e) => e.load),
          deps.clock,
        )
      : false;
    if (committed) {
      resolveCommitted(tx);
      await replay(later?.entries ?? [], failed.error);
      return;
    }
    if (committed === undefined) {
      // nobody can tell: its pages and the later ones stay as they are, and so does every chunk's position
      await letGo(failed.error);
      const error = new CommitUnknownError([...new Set(tx.entries.map((e) => e.load.chunkId))], failed.error);
      poisoned ??= { error };
      for (const e of [...tx.entries, ...(later?.entries ?? [])]) e.reject(error);
      return;
    }
    await replay([...tx.entries, ...(later?.entries ?? [])], failed.error);
  };

  /** Ends a transaction unfinished: its COPY fails, and it is rolled back. */
  const abandon = async (tx: Transaction) => {
    clearTimeout(tx.timer);
    if (!tx.failed) {
      const ended = finished(tx).catch(() => undefined);
      try {
        tx.stream.destroy(new Error('an earlier transaction of the group failed; its pages are written again'));
        await ended;
      } catch {
        // the connection is gone: nothing of the transaction stays
      }
    }
    await tx.client.query('ROLLBACK').catch(() => undefined);
  };

  /** After a failed transaction: the connection is ended when it broke, else rolled back and given back. */
  const letGo = async (cause: unknown) => {
    const client = held.current();
    if (client && (held.broken() || brokenConnection(cause))) await held.drop(cause as Error);
    else if (client) {
      await client.query('ROLLBACK').catch(() => held.release(cause as Error));
      await held.close();
    }
  };

  /** After a failed transaction: its pages written again one at a time, each with its chunk's page writer. */
  const replay = async (entries: readonly Entry[], cause: unknown) => {
    // the page writers below take a connection each: this one goes back meanwhile, so a replay needs no second one
    await letGo(cause);
    const first = entries[0];
    if (!first) return;
    deps.logger.info({
      msg: 'a transaction of several pages failed; writing its pages again one by one',
      job: first.scope.job,
      pages: entries.length,
      err: (classifyPgError(cause) as Error)?.message ?? String(cause),
    });
    await writeAlone(entries);
  };

  /** Pages written one at a time, each with its chunk's page writer (COPY while the chunk is fresh, else a merge). */
  const writeAlone = async (entries: readonly Entry[]) => {
    for (const e of entries) {
      // once a page is missing (or, after a COMMIT nobody can tell about, may be), no later page is written
      if (poisoned) {
        e.reject(poisoned.error);
        continue;
      }
      const writer = openPageWriter(warehouse, deps, e.scope);
      try {
        e.resolve(await writer.write(e.load));
      } catch (err) {
        poisoned = { error: err };
        e.reject(err);
      } finally {
        await writer.close();
      }
    }
  };

  return {
    add(load, scope) {
      return exclusive(async () => {
        if (poisoned) throw poisoned.error;
        let committed!: Promise<MergeCounts>;
        const entry = await new Promise<Entry>((made) => {
          committed = new Promise<MergeCounts>((resolve, reject) => made({ load, scope, resolve, reject }));
        });
        committed.catch(() => undefined); // the chunk awaits it, or has stopped
        if (!open) {
          // the transaction its clock sealed may still be committing on the connection: the next BEGIN follows its COMMIT
          await settle();
          // settle may have found a COMMIT nobody can tell about (TypeScript keeps the narrowing of the check above)
          const refusal = poisoned as { error: unknown } | undefined;
          if (refusal) throw refusal.error;
        }
        // a page of the chunk written again just now met rows in its blocks: this page is merged too, not COPYed, also
        // when another chunk of the lane opened a transaction since (none of this chunk's pages is in it: the pages
        // written again were every page of the failed transaction and of the one after it)
        if (!scope.chunk.fresh) {
          await writeAlone([entry]);
          return { committed };
        }
        if (!open) {
          try {
            const c = await held.get();
            open = transaction(c, suffixOf(load), c.query('BEGIN'));
          } catch (err) {
            // no transaction: the page is written on its own, with the page writer's retries
            await replay([entry], err);
            return { committed };
          }
        }
        const tx = open;
        tx.entries.push(entry);
        tx.rows += load.rows.length;
        try {
          await budget.time('copy', () => write(tx, load.rows));
        } catch (err) {
          // the transaction is lost: with the one sealed before it, if that failed too, its pages are written again
          open = undefined;
          clearTimeout(tx.timer);
          await settle().catch(() => undefined);
          await replay(tx.entries, err);
          return { committed };
        }
        if (tx.rows >= policy.maxRows || deps.clock.now() - tx.startedAt >= policy.maxAgeMs) await commit(true);
        return { committed };
      });
    },
    flush() {
      return exclusive(async () => {
        await commit(false);
        await settle();
      });
    },
    close() {
      return exclusive(async () => {
        await commit(false);
        await settle();
        await held.close();
      });
    },
  };
}

/** A committed transaction's pages: each inserted all its rows. */
function resolveCommitted(tx: Transaction): void {
  for (const e of tx.entries) e.resolve({ inserted: e.load.rows.length, updated: 0, unchanged: 0 });
}

/**
 * Writes into the transaction's COPY and resolves once the stream took the bytes: nothing waits in the stream's own
 * buffer, where (pg-copy-streams 7) a write left behind when PostgreSQL refuses the COPY would be sent on a connection
 * the stream has let go of, and throw outside any caller.
 */
function written(tx: Transaction, lines: Buffer): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (err: unknown) => reject(err);
    tx.stream.once('error', onError);
    tx.stream.write(lines, (err) => {
      tx.stream.off('error', onError);
      if (err) reject(err);
      else resolve();
    });
  });
}

/** Resolves once the transaction's COPY has ended (PostgreSQL answered it); rejects with what failed it. */
function finished(tx: Transaction): Promise<void> {
  if (tx.failed) return Promise.reject(tx.failed);
  return new Promise<void>((resolve, reject) => {
    tx.stream.once('finish', () => resolve());
    tx.stream.once('error', reject);
  });
}
