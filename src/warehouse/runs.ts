import { sql, type Kysely } from 'kysely';
import type { Database, RunStatus } from './schema.ts';
import { commitTrace, tracedTransaction } from './commit-trace.ts';
import { jobLockHeld } from './job-lock.ts';

export interface RunTotals {
  rowsInserted: number;
  rowsUpdated: number;
  rowsUnchanged: number;
  rowsRemoved: number;
  apiRequests: number;
  retries: number;
  rateLimited: number;
  headersFetched: number;
}

export function emptyTotals(): RunTotals {
  return { rowsInserted: 0, rowsUpdated: 0, rowsUnchanged: 0, rowsRemoved: 0, apiRequests: 0, retries: 0, rateLimited: 0, headersFetched: 0 };
}

/**
 * A run's row counts as its committed pages added them (export_run_rows, migration 0010), exact whatever happened to
 * its process since; a run with none there (one from before, or with no page yet) keeps what its row says. Never less
 * than the row says: the sums only grow, and a write that waited for the row (another ledger's, a run's end) may hold
 * an older sum than the one written meanwhile. Written by the ledger and when a run ends; read so by the report too,
 * for pages committed after their run ended (a queued run failed while other tasks still wrote). Each column named
 * literally: the SQL scan of test/security.test.ts proves only literal references constant.
 */
export const ROWS_FROM_PAGES = {
  rows_inserted: sql<string>`greatest(export_runs.rows_inserted, (SELECT sum(p.rows_inserted) FROM export_run_rows p WHERE p.run_id = export_runs.id))`,
  rows_updated: sql<string>`greatest(export_runs.rows_updated, (SELECT sum(p.rows_updated) FROM export_run_rows p WHERE p.run_id = export_runs.id))`,
  rows_unchanged: sql<string>`greatest(export_runs.rows_unchanged, (SELECT sum(p.rows_unchanged) FROM export_run_rows p WHERE p.run_id = export_runs.id))`,
};

/**
 * Opens a row in the run ledger; resolves to the run id. With `startedAt` it can be called again after a lost answer:
 * a running row of the job, command and start already there (its COMMIT went through) is the run's, and is returned
 * rather than a second one opened. Only the job's lock holder starts a run of it at that millisecond.
 */
export async function startRun(
  db: Kysely<Database>,
  input: { chainId: number; job: string; command: string; contracts: readonly string[]; fromBlock?: number; toBlock?: number; startedAt?: Date },
): Promise<string> {
  if (input.startedAt) {
    const opened = await db
      .selectFrom('export_runs')
      .select('id')
      .where('chain_id', '=', String(input.chainId))
      .where('job', '=', input.job)
      .where('command', '=', input.command)
      .where('started_at', '=', input.startedAt)
      .where('status', '=', 'running')
      .executeTakeFirst();
    if (opened) return opened.id;
  }
  const row = await db
    .insertInto('export_runs')
    .values({
      chain_id: input.chainId,
      job: input.job,
      command: input.command,
      contracts: [...input.contracts],
      from_block: input.fromBlock ?? null,
      to_block: input.toBlock ?? null,
      ...(input.startedAt && { started_at: input.startedAt }),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** The commands whose runs are queued: read by workers, not by the process that started them. */
export type QueuedCommand = 'enqueue' | 'schedule';

/** Whether the run whose command `column` holds is a queued one, as SQL. */
export const isQueuedRun = (column: 'command' | 'r.command') => sql<boolean>`${sql.ref(column)} IN ('enqueue', 'schedule')`;

/**
 * Whether an `export_runs` row says running while no process works it: a `run` or `backfill` whose job lock no session
 * holds (the process was killed or crashed; the job's next run resumes its work). Queued runs are never abandoned so:
 * their workers hold the job only while on a task.
 */
export const runAbandoned = sql<boolean>`(export_runs.status = 'running' AND NOT ${isQueuedRun('command')} AND NOT ${jobLockHeld('export_runs.job')})`;

/**
 * Opens again the runs among `runIds` that ended failed (a `run` stopped by a signal, a queued run whose task gave up)
 * because their open ranges are being queued again (by `command`: `enqueue`, or a schedule): the run goes on as a
 * queued run, its command now that one, so workers finishing those ranges mark it succeeded (or failed again, with
 * the new reason), and the ledger ends saying what became of the work. Resolves to the runs opened, each with the
 * error it had ended with (the caller says it; the row's is cleared). Call it in the enqueue's transaction.
 */
export async function reopenFailedRuns(db: Kysely<Database>, runIds: readonly string[], command: QueuedCommand): Promise<{ id: string; error: string | null }[]> {
  if (!runIds.length) return [];
  const failed = await db
    .selectFrom('export_runs')
    .select(['id', 'error'])
    .where('id', 'in', [...runIds])
    .where('status', '=', 'failed')
    .orderBy('id')
    .forUpdate()
    .execute();
  if (!failed.length) return [];
  await db
    .updateTable('export_runs')
    .set({ status: 'running', command, error: null, finished_at: null })
    .where(
      'id',
      'in',
      failed.map((r) => r.id),
    )
    .execute();
  return failed.map((r) => ({ id: r.id, error: r.error }));
}

/** Ends a run: its status, and the reason when it failed. Its totals are what its ledger added (addToRun), its row counts what its pages did. */
export async function endRun(db: Kysely<Database>, runId: string, end: { status: Exclude<RunStatus, 'running'>; error?: string }): Promise<void> {
  await db
    .updateTable('export_runs')
    .set({ ...ROWS_FROM_PAGES, status: end.status, error: end.error ?? null, finished_at: sql<Date>`now()` })
    .where('id', '=', runId)
    .execute();
}

/** Records the block span a run covers, once it is planned. */
export async function setRunSpan(db: Kysely<Database>, runId: string, fromBlock: number, toBlock: number): Promise<void> {
  await db.updateTable('export_runs').set({ from_block: fromBlock, to_block: toBlock }).where('id', '=', runId).execute();
}

/**
 * Marks the job's runs still 'running' as failed: called while holding the job's lock, so no live run
 * owns them; their process ended without finishing (killed, or the machine went down), or, for a queued
 * run, no worker held its tasks at that moment.
 */
export async function failAbandonedRuns(db: Kysely<Database>, chainId: number, job: string): Promise<number> {
  const result = await db
    .updateTable('export_runs')
    .set({
      ...ROWS_FROM_PAGES,
      status: 'failed',
      finished_at: sql<Date>`now()`,
      // a queued run has no process of its own: workers were still on it, or gave its tasks up
      error: sql<string>`CASE WHEN ${isQueuedRun('command')}
        THEN 'its queued chunks were not all read when \`erc20-etl run\` of the job started; that run finished its ranges'
        ELSE 'the process ended without finishing (killed or crashed); the next run resumed its work' END`,
    })
    .where('chain_id', '=', String(chainId))
    .where('job', '=', job)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Adds what one worker task did to its run's totals: tasks of one run end on many machines, so each
 * adds its share in one statement rather than writing the whole. The row counts are not added: they are written
 * as the run's committed pages say (`ROWS_FROM_PAGES`), so they are exact after a kill too. `trace` keeps the
 * transaction's id, so a caller whose write failed can ask whether it committed (`committedAttempt`).
 */
export async function addToRun(db: Kysely<Database>, runId: string, add: RunTotals, trace = commitTrace()): Promise<void> {
  const plus = (column: TotalsColumn) => sql<string>`${sql.ref(column)} + ${String(add[COLUMNS[column]])}`;
  await tracedTransaction(db, trace, (trx) =>
    trx
      .updateTable('export_runs')
      // each column named literally: the SQL scan of test/security.test.ts proves only literal references constant
      .set({
        ...ROWS_FROM_PAGES,
        rows_removed: plus('rows_removed'),
        api_requests: plus('api_requests'),
        retries: plus('retries'),
        rate_limited: plus('rate_limited'),
        headers_fetched: plus('headers_fetched'),
      })
      .where('id', '=', runId)
      .execute(),
  );
}

const COLUMNS = {
  rows_removed: 'rowsRemoved',
  api_requests: 'apiRequests',
  retries: 'retries',
  rate_limited: 'rateLimited',
  headers_fetched: 'headersFetched',
} as const satisfies Record<string, keyof RunTotals>;

type TotalsColumn = keyof typeof COLUMNS;

/**
 * Marks a queued run succeeded once none of the ranges it planned is open; resolves to whether this call
 * did. A run already failed (a task met a fatal error, or `run` took its work over) stays as it is.
 */
export async function closeRunIfDone(db: Kysely<Database>, runId: string): Promise<boolean> {
  const result = await db
    .updateTable('export_runs')
    .set({ ...ROWS_FROM_PAGES, status: 'succeeded', finished_at: sql<Date>`now()` })
    .where('id', '=', runId)
    .where('status', '=', 'running')
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('export_ranges').select(sql`1`.as('one')).where('created_by_run', '=', runId).where('status', '=', 'open'))))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Marks a run failed with the reason, unless it has ended already; resolves to whether this call did. */
export async function failRun(db: Kysely<Database>, runId: string, error: string): Promise<boolean> {
  const result = await db
    .updateTable('export_runs')
    .set({ ...ROWS_FROM_PAGES, status: 'failed', error, finished_at: sql<Date>`now()` })
    .where('id', '=', runId)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * A chain other than `chainId` that the job has worked on, as decimal text; undefined when there is none. A job's
 * name is its identity (its lock, its ledger rows, where it resumes): one name, one chain. A run of another chain
 * counts unless it failed before it planned a range there: such a run (its endpoint down, or refusing the key,
 * before it could say which chain it serves) wrote nothing but its ledger row, and a job file corrected to the
 * chain meant is not refused for it.
 */
export async function otherChainOfJob(db: Kysely<Database>, job: string, chainId: number): Promise<string | undefined> {
  const row = await db
    .selectFrom('export_runs as r')
    .select('r.chain_id')
    .where('r.job', '=', job)
    .where('r.chain_id', '<>', String(chainId))
    .where((eb) =>
      eb.or([
        eb('r.status', '<>', 'failed'),
        eb.exists(eb.selectFrom('export_ranges as g').select(sql`1`.as('one')).where('g.job', '=', job).whereRef('g.chain_id', '=', 'r.chain_id')),
      ]),
    )
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? undefined : String(row.chain_id);
}
