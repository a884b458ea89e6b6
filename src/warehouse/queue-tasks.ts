import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';
import type { WarehouseTransaction } from './transaction.ts';

/** What became of a task handed to {@link addTaskUnlessRunning}. */
export type TaskAdded = 'added' | 'replaced' | 'running';

/**
 * Puts a task on graphile-worker's queue under its job `key`, unless a worker holds the task of that key
 * right now ('running': nothing changes). A task of the key that waits, or that used up its attempts, is
 * replaced ('replaced'): its attempts start again.
 *
 * @example await addTaskUnlessRunning(trx, { task: 'erc20_etl_chunk', payload, key: 'erc20-etl:chunk:42' }) // → 'added'
 */
export async function addTaskUnlessRunning(trx: WarehouseTransaction, task: { task: string; payload: unknown; key: string }): Promise<TaskAdded> {
  const answer = await sql<{ replaced: boolean }>`
    SELECT (graphile_worker.add_job(${task.task}, ${JSON.stringify(task.payload)}::json, job_key => ${task.key})).revision > 0 AS replaced
    WHERE NOT EXISTS (SELECT 1 FROM graphile_worker.jobs WHERE key = ${task.key} AND locked_at IS NOT NULL)`.execute(trx);
  const row = answer.rows[0];
  if (!row) return 'running';
  return row.replaced ? 'replaced' : 'added';
}

/** A task a worker took and left unread: as the worker last left it, and the attempts it is to have again. */
export interface LeftTask {
  id: string;
  /** Its attempts, revision and key when this worker last took it (graphile-worker counts an attempt as a task is taken). */
  attempts: number;
  revision: number;
  /** `enqueue` replacing a task that runs takes its key away (and gives it its last attempt), the revision unchanged. */
  key: string | null;
  /** The attempts it had before this worker took it. */
  restore: number;
  /** With `lastError`: the last error it had then, put back (a stop that interrupted it is not an error of the task). */
  lastError?: string | null;
}

/**
 * Gives back tasks a worker took and left unread: each with the attempts it had before (`restore`) and, where given,
 * its last error then (`lastError`), ready now, if it
 * is still as the worker left it: unlocked, with the same attempts, revision and key. One another worker took since, or
 * `enqueue` replaced, or that is gone (read to its end) is left as it is. The update graphile-worker's
 * `reschedule_jobs` makes (run_at, attempts, updated_at), made on its jobs table with those conditions in it, so the
 * check and the change are one (a worker taking the task meanwhile is waited for, and the task then left). Resolves to
 * the ids given back.
 *
 * @example await giveBackTasks(db, [{ id: '42', attempts: 1, revision: 0, key: 'k', restore: 0 }]) // → ['42']
 */
export async function giveBackTasks(db: Kysely<Database>, tasks: readonly LeftTask[]): Promise<string[]> {
  if (!tasks.length) return [];
  const { rows } = await sql<{ id: string }>`
    UPDATE graphile_worker._private_jobs AS j SET run_at = now(), attempts = t.restore, updated_at = now(),
      last_error = CASE WHEN t.restores_error THEN t.last_error ELSE j.last_error END
    FROM unnest(${tasks.map((t) => t.id)}::bigint[], ${tasks.map((t) => t.attempts)}::int[], ${tasks.map((t) => t.revision)}::int[], ${tasks.map((t) => t.restore)}::int[],
        ${tasks.map((t) => 'lastError' in t)}::boolean[], ${tasks.map((t) => t.lastError ?? null)}::text[], ${tasks.map((t) => t.key)}::text[])
      AS t(id, attempts, revision, restore, restores_error, last_error, key)
    WHERE j.id = t.id AND j.attempts = t.attempts AND j.revision = t.revision AND j.key IS NOT DISTINCT FROM t.key AND j.locked_at IS NULL
    RETURNING j.id::text AS id`.execute(db);
  return rows.map((r) => r.id);
}
