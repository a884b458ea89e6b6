import { sql, type Kysely } from 'kysely';

/**
 * The rows each run's pages wrote, per chunk (`export_run_rows`): a page adds its rows inserted, updated and
 * unchanged here in the transaction that commits it and moves its chunk, so what a run wrote is known exactly even
 * when its process was killed a moment later. Only the chunk's writer touches its row; the run's row is only share-locked
 * by the foreign key (`FOR KEY SHARE`, which no update of its counts waits on). `export_runs`' row counts are these rows
 * summed, written by the run's ledger every few seconds and when the run ends (or is found abandoned).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE export_run_rows (
      run_id         bigint NOT NULL REFERENCES export_runs (id) ON DELETE CASCADE,
      chunk_id       bigint NOT NULL,
      rows_inserted  bigint NOT NULL DEFAULT 0 CHECK (rows_inserted >= 0),
      rows_updated   bigint NOT NULL DEFAULT 0 CHECK (rows_updated >= 0),
      rows_unchanged bigint NOT NULL DEFAULT 0 CHECK (rows_unchanged >= 0),
      PRIMARY KEY (run_id, chunk_id)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS export_run_rows`.execute(db);
}
