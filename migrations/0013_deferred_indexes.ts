import { sql, type Kysely } from 'kysely';

/**
 * The lookup indexes a first load into an empty token_transfers builds after its rows instead of row by row
 * (`src/warehouse/deferred-indexes.ts`): each row is one index the load dropped, with its definition as
 * `pg_get_indexdef` printed it, written in the same transaction as the drop. The run rebuilds them once its chunks
 * are read, and deletes the row in the same transaction as the rebuild; a row that outlives its run (the run was
 * killed) is rebuilt by the next run or by `migrate`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE IF NOT EXISTS deferred_indexes (
      name text PRIMARY KEY,
      definition text NOT NULL,
      run_id bigint,
      dropped_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS deferred_indexes`.execute(db);
}
