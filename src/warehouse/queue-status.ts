import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

export interface QueueStatus {
  /** Tasks waiting for a worker, those waiting to be retried included. */
  waiting: number;
  /** Tasks a worker holds now. */
  running: number;
  /** Tasks that used up their attempts: the next `enqueue` of their job queues them afresh. */
  givenUp: number;
  /** The most recent error one of these tasks met, if any is still on the queue. */
  lastError: string | null;
  /** Worker processes heard from in the last minute. */
  workers: { host: string; pid: number; seenAt: Date }[];
}

/**
 * What graphile-worker's queue holds of the tasks whose names start with `prefix`, and the workers heard from lately;
 * undefined when the queue was never installed (no `erc20-etl migrate` since workers came to this version).
 *
 * @example await readQueueStatus(warehouse.db, 'erc20_etl_') // → { waiting: 3, running: 1, givenUp: 0, lastError: null, workers: [...] }
 */
export async function readQueueStatus(db: Kysely<Database>, prefix: string): Promise<QueueStatus | undefined> {
  const installed = await sql<{ ok: boolean }>`SELECT to_regclass('graphile_worker.jobs') IS NOT NULL AS ok`.execute(db);
  if (!installed.rows[0]?.ok) return undefined;
  const { rows } = await sql<{ waiting: string; running: string; given_up: string; last_error: string | null }>`
    SELECT count(*) FILTER (WHERE locked_at IS NULL AND attempts < max_attempts) AS waiting,
           count(*) FILTER (WHERE locked_at IS NOT NULL) AS running,
           count(*) FILTER (WHERE locked_at IS NULL AND attempts >= max_attempts) AS given_up,
           (array_agg(last_error ORDER BY updated_at DESC) FILTER (WHERE last_error IS NOT NULL))[1] AS last_error
    FROM graphile_worker.jobs WHERE starts_with(task_identifier, ${prefix})`.execute(db);
  const workers = await sql<{ host: string; pid: number; seen_at: Date }>`
    SELECT host, pid, max(seen_at) AS seen_at FROM worker_heartbeats
    WHERE seen_at > now() - interval '1 minute' GROUP BY host, pid ORDER BY host, pid`.execute(db);
  const row = rows[0]!;
  return {
    waiting: Number(row.waiting),
    running: Number(row.running),
    givenUp: Number(row.given_up),
    lastError: row.last_error,
    workers: workers.rows.map((w) => ({ host: w.host, pid: w.pid, seenAt: w.seen_at })),
  };
}
