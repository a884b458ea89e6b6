import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';
import { isQueuedRun } from './runs.ts';
import { jobLockHeld } from './job-lock.ts';

export interface QueueStatus {
  /** Tasks waiting for a worker, those waiting to be retried included. */
  waiting: number;
  /** Tasks a worker holds now. */
  running: number;
  /**
   * Tasks given up: those that used up their attempts, and the unfinished chunks of a queued run that a task failed
   * for good (its error cannot be helped by retrying, so its task left the queue). The next `enqueue` of their job
   * queues them afresh.
   */
  givenUp: number;
  /** The most recent error one of these tasks met (or the run a task failed for good), if any. */
  lastError: string | null;
  /** Worker processes heard from in the last minute. */
  workers: { host: string; pid: number; seenAt: Date }[];
}

/**
 * What graphile-worker's queue holds of the tasks whose names start with `prefix`, with the chunks whose tasks were
 * given up (their keys start with `chunkKeyPrefix`, then the chunk's id), and the workers heard from lately;
 * undefined when the queue was never installed (no `erc20-etl migrate` since workers came to this version).
 *
 * @example await readQueueStatus(warehouse.db, { prefix: 'erc20_etl_', chunkKeyPrefix: 'erc20-etl:chunk:' }) // → { waiting: 3, running: 1, givenUp: 0, lastError: null, workers: [...] }
 */
export async function readQueueStatus(db: Kysely<Database>, keys: { prefix: string; chunkKeyPrefix: string }): Promise<QueueStatus | undefined> {
  const { prefix, chunkKeyPrefix } = keys;
  const installed = await sql<{ ok: boolean }>`SELECT to_regclass('graphile_worker.jobs') IS NOT NULL AS ok`.execute(db);
  if (!installed.rows[0]?.ok) return undefined;
  const { rows } = await sql<{ waiting: string; running: string; given_up: string; last_error: string | null; last_error_at: Date | null }>`
    SELECT count(*) FILTER (WHERE locked_at IS NULL AND attempts < max_attempts) AS waiting,
           count(*) FILTER (WHERE locked_at IS NOT NULL) AS running,
           count(*) FILTER (WHERE locked_at IS NULL AND attempts >= max_attempts) AS given_up,
           (array_agg(last_error ORDER BY updated_at DESC) FILTER (WHERE last_error IS NOT NULL))[1] AS last_error,
           max(updated_at) FILTER (WHERE last_error IS NOT NULL) AS last_error_at
    FROM graphile_worker.jobs WHERE starts_with(task_identifier, ${prefix})`.execute(db);
  // a task that failed for good left the queue and failed its queued run, whose unfinished chunks wait for an enqueue
  // (or a `run` of the job: while one holds the job's lock, it is reading them, and they are not given up)
  const failed = await sql<{ chunks: string; last_error: string | null; at: Date | null }>`
    SELECT count(*) AS chunks, (array_agg(r.error ORDER BY r.finished_at DESC))[1] AS last_error, max(r.finished_at) AS at
    FROM export_chunks c JOIN export_ranges g ON g.id = c.range_id JOIN export_runs r ON r.id = g.created_by_run
    WHERE NOT c.done AND g.status = 'open' AND r.status = 'failed' AND ${isQueuedRun('r.command')} AND NOT ${jobLockHeld('r.job')}
      AND NOT EXISTS (SELECT 1 FROM graphile_worker.jobs j WHERE j.key = ${chunkKeyPrefix}::text || c.id::text)`.execute(db);
  const workers = await sql<{ host: string; pid: number; seen_at: Date }>`
    SELECT host, pid, max(seen_at) AS seen_at FROM worker_heartbeats
    WHERE seen_at > now() - interval '1 minute' GROUP BY host, pid ORDER BY host, pid`.execute(db);
  const row = rows[0]!;
  const gone = failed.rows[0];
  const goneChunks = Number(gone?.chunks ?? 0);
  return {
    waiting: Number(row.waiting),
    running: Number(row.running),
    givenUp: Number(row.given_up) + goneChunks,
    lastError: latest([
      { text: row.last_error, at: row.last_error_at },
      { text: goneChunks ? (gone?.last_error ?? null) : null, at: gone?.at ?? null },
    ]),
    workers: workers.rows.map((w) => ({ host: w.host, pid: w.pid, seenAt: w.seen_at })),
  };
}

/** The text of the most recent of these errors, or null when none has a text. */
function latest(errors: readonly { text: string | null; at: Date | null }[]): string | null {
  const known = errors.filter((e): e is { text: string; at: Date | null } => e.text !== null);
  known.sort((a, b) => (b.at?.getTime() ?? 0) - (a.at?.getTime() ?? 0));
  return known[0]?.text ?? null;
}

/**
 * The tasks waiting on the queue whose names start with `prefix` but are none of `own` (another chain's, which a
 * worker of this chain never takes), counted by name.
 *
 * @example await waitingTasksBesides(db, 'erc20_etl_', ['erc20_etl_chunk', 'erc20_etl_enqueue']) // → [{ task: 'erc20_etl_chunk_8453', waiting: 8 }]
 */
export async function waitingTasksBesides(db: Kysely<Database>, prefix: string, own: readonly string[]): Promise<{ task: string; waiting: number }[]> {
  const { rows } = await sql<{ task: string; n: string }>`
    SELECT task_identifier AS task, count(*) AS n FROM graphile_worker.jobs
    WHERE starts_with(task_identifier, ${prefix}) AND NOT task_identifier = ANY(${[...own]}::text[]) AND locked_at IS NULL AND attempts < max_attempts
    GROUP BY 1 ORDER BY 1`.execute(db);
  return rows.map((r) => ({ task: r.task, waiting: Number(r.n) }));
}

/**
 * The tasks named `tasks` that a worker other than `own` (a process's worker ids) holds (locked), and how long ago the one of their workers heard from least
 * lately was last heard from (seconds; null when one never was): what a `worker --once` leaves to others.
 *
 * @example await heldTasks(db, ['erc20_etl_chunk']) // → { held: 4, silentSeconds: 1.2 }
 */
export async function heldTasks(db: Kysely<Database>, tasks: readonly string[], own: readonly string[] = []): Promise<{ held: number; silentSeconds: number | null }> {
  const { rows } = await sql<{ held: number; silent: number | null; unheard: boolean | null }>`
    SELECT count(*)::int AS held, max(extract(epoch FROM now() - h.seen_at))::float8 AS silent, bool_or(h.seen_at IS NULL) AS unheard
    FROM graphile_worker.jobs j LEFT JOIN worker_heartbeats h ON h.worker_id = j.locked_by
    WHERE j.locked_by IS NOT NULL AND j.task_identifier = ANY(${[...tasks]}::text[]) AND NOT j.locked_by = ANY(${[...own]}::text[])`.execute(db);
  const row = rows[0];
  return { held: row?.held ?? 0, silentSeconds: row?.unheard ? null : (row?.silent ?? null) };
}
