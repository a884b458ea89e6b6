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

/**
 * Gives back tasks a worker took and left unread: each with the attempts it had before (`attempts`, by task id), ready
 * now. A task still locked is left as it is (graphile-worker's `reschedule_jobs`, which also takes 0 attempts, as its
 * JavaScript helper does not). Resolves to the ids given back.
 *
 * @example await giveBackTasks(db, new Map([['42', 0]])) // → ['42']
 */
export async function giveBackTasks(db: Kysely<Database>, attempts: ReadonlyMap<string, number>): Promise<string[]> {
  if (!attempts.size) return [];
  const ids = [...attempts.keys()];
  const { rows } = await sql<{ id: string }>`
    SELECT r.id::text AS id FROM unnest(${ids}::bigint[], ${ids.map((id) => attempts.get(id)!)}::int[]) AS t(id, attempts),
      LATERAL graphile_worker.reschedule_jobs(ARRAY[t.id], run_at => now(), attempts => t.attempts) AS r`.execute(db);
  return rows.map((r) => r.id);
}
