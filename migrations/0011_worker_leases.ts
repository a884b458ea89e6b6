import { sql, type Kysely } from 'kysely';

/**
 * Each worker's own lease (`--dead-after`, in seconds) beside its heartbeat: a worker beats every quarter of its own
 * lease, so it is judged dead by that lease, not by the lease of whichever worker sweeps (one started with a shorter
 * `--dead-after`, of any chain, would hand back the tasks of workers that beat on time). Rows of workers started
 * before this migration have none: they are judged by the sweeper's lease, as before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE worker_heartbeats ADD COLUMN IF NOT EXISTS lease_seconds integer CHECK (lease_seconds > 0)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE worker_heartbeats DROP COLUMN IF EXISTS lease_seconds`.execute(db);
}
