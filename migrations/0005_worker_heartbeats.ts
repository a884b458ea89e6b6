import { sql, type Kysely } from 'kysely';

/**
 * Workers say they are alive: each graphile-worker worker id of a live `erc20-etl worker` process has a row
 * whose `seen_at` it refreshes. A task locked by a worker not seen for a while is handed back to the
 * queue, so another worker picks it up; graphile-worker alone would keep it locked for four hours.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE worker_heartbeats (
      worker_id text        PRIMARY KEY,
      host      text        NOT NULL,
      pid       integer     NOT NULL,
      seen_at   timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS worker_heartbeats`.execute(db);
}
