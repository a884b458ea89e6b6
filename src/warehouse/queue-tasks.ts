import { sql } from 'kysely';
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
