import { sql, type Kysely } from 'kysely';

/**
 * One requests-per-second limit shared by every process that exports from the same API into this
 * warehouse: each request reserves the next free slot of its API's row. The table is UNLOGGED: a slot
 * schedule need not survive a crash of PostgreSQL, and writing it skips the WAL.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE UNLOGGED TABLE api_rate_limits (
      key     text        PRIMARY KEY,
      next_at timestamptz NOT NULL
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS api_rate_limits`.execute(db);
}
